import { Inject, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MetricsService } from '../metrics/metrics.service';
import { UpstreamClient } from '../upstream/upstream-client';
import { EmbeddingIndexer } from './embedding-indexer';
import { EmbeddingsClient } from './embeddings-client';
import { SemanticSearch } from './semantic-search';
import { VectorIndex } from './vector-index';

/** The client of the embeddings endpoint (EMBEDDINGS_*); null while semantic ranking is not configured. */
const EMBEDDINGS_UPSTREAM_CLIENT = Symbol('EMBEDDINGS_UPSTREAM_CLIENT');

/** Optional semantic ranking: embeddings of memories and questions, when configured and pgvector exists. */
@Module({
  providers: [
    {
      provide: EMBEDDINGS_UPSTREAM_CLIENT,
      inject: [APP_CONFIG, MetricsService],
      useFactory: (config: AppConfig, metrics: MetricsService) =>
        config.embeddings
          ? new UpstreamClient({
              baseUrl: config.embeddings.baseUrl,
              apiKey: config.embeddings.apiKey ?? undefined,
              timeoutMs: config.embeddings.timeoutMs,
              streamIdleTimeoutMs: config.embeddings.timeoutMs,
              provider: 'openai',
              observer: metrics.upstreamObserver('embeddings'),
            })
          : null,
    },
    {
      provide: EmbeddingsClient,
      inject: [APP_CONFIG, EMBEDDINGS_UPSTREAM_CLIENT],
      useFactory: (config: AppConfig, client: UpstreamClient | null) =>
        config.embeddings && client
          ? new EmbeddingsClient(client, {
              model: config.embeddings.model,
              dimensions: config.embeddings.dimensions,
              timeoutMs: config.embeddings.timeoutMs,
            })
          : null,
    },
    SemanticSearch,
    VectorIndex,
    EmbeddingIndexer,
  ],
  exports: [SemanticSearch],
})
export class EmbeddingsModule implements OnApplicationShutdown {
  constructor(
    @Optional() @Inject(EMBEDDINGS_UPSTREAM_CLIENT) private readonly client: UpstreamClient | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client?.destroy();
  }
}
