import { errorMessage } from '../common/error-message';
import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';

/** Keys are `<prefix><bucket>:<client address>`, each a sorted set of the hits in the window. */
export const REDIS_KEY_PREFIX = 'pms:ratelimit:';

/** After a command failed, Redis is not asked for this long: requests pass at once meanwhile. */
export const REDIS_PAUSE_AFTER_FAILURE_MS = 5_000;

/** How long the connection at boot may take before the service warns that Redis does not answer. */
const CONNECT_WAIT_MS = 2_000;

/** What the rate limits' Redis is doing, for /ready: answering, or failing (requests pass unchecked). */
export interface RedisRateLimitState {
  available: boolean;
  /** Why it is not, when it is not. */
  problem?: string;
}

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
 * When Redis cannot answer, requests are let through: an outage of the counter store must not become
 * an outage of the service, nor a slow Redis a slow service. Each command has `commandTimeout`; after a
 * failure Redis is not asked for REDIS_PAUSE_AFTER_FAILURE_MS (a breaker), then one request tries it
 * again; the connection at boot is started, never awaited, so a Redis that accepts and never answers
 * cannot hold start-up. The trouble is logged as a warning when it starts and when it ends, and `state`
 * tells /ready.
 */
export class RedisThrottlerStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private started = false;
  private closed = false;
  /** Until when Redis is not asked (0: it is asked). */
  private pausedUntil = 0;
  /** Why the last command failed, while it has not answered since. */
  private failure: string | null = null;

  constructor(url: string, commandTimeoutMs: number) {
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false, // fail fast (and let the request through) while disconnected
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      commandTimeout: commandTimeoutMs,
    });
    this.redis.on('error', (error: Error) => this.failed(`Redis error: ${error.message}`));
    this.redis.on('ready', () => this.answered());
  }

  get state(): RedisRateLimitState {
    if (this.failure !== null) return { available: false, problem: this.failure };
    if (this.redis.status !== 'ready')
      return { available: false, problem: `connection ${this.redis.status}` };
    return { available: true };
  }

  onModuleInit(): void {
    if (this.started) return;
    this.started = true;
    // ioredis keeps reconnecting; until it is ready, requests are let through.
    this.redis.connect().catch((error: unknown) => {
      if (!this.closed) this.failed(`cannot reach Redis for rate limits: ${errorMessage(error)}`);
    });
    // a server that accepts the connection and never answers fails no connect: it is told here
    setTimeout(() => {
      if (!this.closed && this.redis.status !== 'ready') {
        this.failed(`Redis has not answered within ${CONNECT_WAIT_MS / 1000} s of connecting`);
      }
    }, CONNECT_WAIT_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
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
    if (Date.now() < this.pausedUntil || this.redis.status !== 'ready') return NOT_CHECKED;
    // after a failure, one request at a time tries Redis again
    if (this.failure !== null) this.pausedUntil = Date.now() + REDIS_PAUSE_AFTER_FAILURE_MS;
    try {
      const [hits, refused, resetInMs] = (await this.redis.eval(
        SLIDING_WINDOW_SCRIPT,
        1,
        REDIS_KEY_PREFIX + key,
        String(ttl),
        String(limit),
        randomBytes(6).toString('hex'),
      )) as [number, number, number];
      this.answered();
      const resetIn = Math.ceil(resetInMs / 1000);
      const isBlocked = refused === 1;
      return {
        totalHits: isBlocked ? hits + 1 : hits,
        timeToExpire: resetIn,
        isBlocked,
        timeToBlockExpire: isBlocked ? resetIn : 0,
      };
    } catch (error) {
      this.failed(`Redis did not answer: ${errorMessage(error)}`);
      return NOT_CHECKED;
    }
  }

  /** A command failed: Redis is left alone for a while; the first failure of a spell is a warning. */
  private failed(problem: string): void {
    this.pausedUntil = Date.now() + REDIS_PAUSE_AFTER_FAILURE_MS;
    if (this.failure === null) {
      this.logger.warn(
        `${problem}; rate limits are not checked while Redis fails (it is asked again every ` +
          `${REDIS_PAUSE_AFTER_FAILURE_MS / 1000} s)`,
      );
    }
    this.failure = problem;
  }

  private answered(): void {
    if (this.failure === null) return;
    this.failure = null;
    this.pausedUntil = 0;
    this.logger.log('Redis answers again: rate limits are checked');
  }
}

/** A request let through without counting it. */
const NOT_CHECKED = { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
