import { errorMessage } from '../common/error-message';
import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';

/** Keys are `<prefix><bucket>:<client address>`, each a sorted set of the hits in the window. */
export const REDIS_KEY_PREFIX = 'pms:ratelimit:';

/** A broken Redis is reported at most this often, however many requests meet it. */
const WARN_INTERVAL_MS = 30_000;

/**
 * A sliding window in one Lua script, so that concurrent requests on several replicas count exactly:
 * drop the hits older than the window, count the rest, add this hit when under the limit. Times come
 * from the Redis server, so the replicas' clocks do not matter.
 * Returns { hits in the window (this one included when admitted), 1 when refused, ms until the oldest
 * hit leaves the window }.
 */
const SLIDING_WINDOW_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local hits = redis.call('ZCARD', KEYS[1])
local refused = 1
if hits < limit then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
  hits = hits + 1
  refused = 0
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local resetIn = window
if oldest[2] then resetIn = tonumber(oldest[2]) + window - now end
return { hits, refused, resetIn }
`;

/**
 * ThrottlerStorage in Redis (REDIS_URL), so that every replica counts against the same buckets.
 * When Redis cannot answer, requests are let through (and the failure is logged): an outage of the
 * counter store must not become an outage of the service.
 */
export class RedisThrottlerStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private lastWarning = 0;
  private closed = false;

  constructor(url: string) {
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false, // fail fast (and let the request through) while disconnected
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
    });
    this.redis.on('error', (error: Error) => this.warn(`Redis error: ${error.message}`));
  }

  async onModuleInit(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (error) {
      // ioredis keeps reconnecting; until then requests are let through.
      this.warn(`cannot reach Redis for rate limits yet: ${errorMessage(error)}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    _throttlerName: string,
  ): Promise<{ totalHits: number; timeToExpire: number; isBlocked: boolean; timeToBlockExpire: number }> {
    try {
      const [hits, refused, resetInMs] = (await this.redis.eval(
        SLIDING_WINDOW_SCRIPT,
        1,
        REDIS_KEY_PREFIX + key,
        String(ttl),
        String(limit),
        randomBytes(6).toString('hex'),
      )) as [number, number, number];
      const resetIn = Math.ceil(resetInMs / 1000);
      const isBlocked = refused === 1;
      return {
        totalHits: isBlocked ? hits + 1 : hits,
        timeToExpire: resetIn,
        isBlocked,
        timeToBlockExpire: isBlocked ? resetIn : 0,
      };
    } catch (error) {
      this.warn(`rate limit not checked, Redis did not answer: ${errorMessage(error)}`);
      return { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
    }
  }

  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_INTERVAL_MS) return;
    this.lastWarning = now;
    this.logger.warn(message);
  }
}
