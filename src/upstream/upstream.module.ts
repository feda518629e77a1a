import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MetricsService } from '../metrics/metrics.service';
import { UpstreamClient } from './upstream-client';

/** The one client for the configured upstream: the only URL the proxy ever calls. */
@Global()
@Module({
  providers: [
    {
      provide: UpstreamClient,
      inject: [APP_CONFIG, MetricsService],
      useFactory: (config: AppConfig, metrics: MetricsService) =>
        new UpstreamClient({
          baseUrl: config.upstream.baseUrl,
          apiKey: config.upstream.apiKey ?? undefined,
          timeoutMs: config.upstream.timeoutMs,
          streamIdleTimeoutMs: config.upstream.streamIdleTimeoutMs,
          provider: config.upstream.provider,
          observer: metrics.upstreamObserver('proxy'),
        }),
    },
  ],
  exports: [UpstreamClient],
})
export class UpstreamModule implements OnApplicationShutdown {
  constructor(@Inject(UpstreamClient) private readonly client: UpstreamClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.destroy();
  }
}
