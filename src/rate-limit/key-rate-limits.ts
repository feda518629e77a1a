import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import type { Response } from 'express';
import { ApiError } from '../common/api-error';
import type { RequestAccess } from '../common/request-access';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

const ONE_MINUTE_MS = 60_000;

/**
 * The limits of an application key (KEY_RATE_LIMIT_PER_MINUTE) and of its application, all its keys
 * together (APPLICATION_RATE_LIMIT_PER_MINUTE), on top of the per-address ones, in the same counters
 * (in memory, or Redis with REDIS_URL). The root key has none. A refusal says which limit it was:
 * `key_rate_limit_exceeded` or `application_rate_limit_exceeded`.
 */
@Injectable()
export class KeyRateLimits {
  private readonly limits: Array<{ name: 'key' | 'application'; limit: number }>;

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limits = [
      { name: 'key' as const, limit: config.keyRateLimitPerMinute },
      { name: 'application' as const, limit: config.applicationRateLimitPerMinute },
    ].filter((entry) => entry.limit > 0);
  }

  async count(access: RequestAccess, res: Response): Promise<void> {
    if (access.root || access.keyId === null) return;
    for (const { name, limit } of this.limits) {
      const id = name === 'key' ? access.keyId : access.application.id;
      const record = await this.storage.increment(`${name}:${id}`, ONE_MINUTE_MS, limit, 0, name);
      if (!record.isBlocked) continue;
      const retryAfter = Math.max(1, record.timeToBlockExpire);
      res.header('Retry-After', String(retryAfter));
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        `${name}_rate_limit_exceeded`,
        `Too many requests for this ${name === 'key' ? 'key' : 'application'}: the limit is ${limit} per minute. Retry after ${retryAfter} s.`,
      );
    }
  }
}
