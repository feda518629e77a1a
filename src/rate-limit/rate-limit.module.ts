import { Module } from '@nestjs/common';
import { ThrottlerModule, ThrottlerModuleOptions } from '@nestjs/throttler';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { KeyRateLimits } from './key-rate-limits';
import { RedisThrottlerStorage } from './redis-throttler-storage';

const ONE_MINUTE_MS = 60_000;

/**
 * The two limits (`default` and `ingest`, per client address per minute) for @nestjs/throttler, with
 * the counters in memory or, with REDIS_URL, in Redis for several replicas. The guard that applies
 * them is RateLimitGuard, registered in RequestPipelineModule ahead of the API key guard.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): ThrottlerModuleOptions => ({
        throttlers: [
          { name: 'default', ttl: ONE_MINUTE_MS, limit: config.rateLimitPerMinute, blockDuration: 0 },
          { name: 'ingest', ttl: ONE_MINUTE_MS, limit: config.ingestRateLimitPerMinute, blockDuration: 0 },
        ],
        storage:
          config.redisUrl === null
            ? undefined
            : new RedisThrottlerStorage(config.redisUrl, config.redisCommandTimeoutMs),
      }),
    }),
  ],
  providers: [KeyRateLimits],
  exports: [ThrottlerModule, KeyRateLimits], // ThrottlerModule: the storage, whose Redis /ready reports
})
export class RateLimitModule {}
