import { Inject, Injectable } from '@nestjs/common';
import { getStorageToken, ThrottlerStorage } from '@nestjs/throttler';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { TurnRecorder } from '../messages/turn-recorder';
import { RedisThrottlerStorage } from '../rate-limit/redis-throttler-storage';

export const READINESS_DB_TIMEOUT_MS = 2_000;

@Injectable()
export class ReadinessService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly turns: TurnRecorder,
    @Inject(getStorageToken()) private readonly rateLimits: ThrottlerStorage,
  ) {}

  /**
   * Ready when the database answers within its timeout and completed turns are being stored as fast as
   * they come (a full queue means requests are waiting: send traffic elsewhere); Redis is reported, never
   * counted against readiness. Throws Terminus' 503
   * exception, whose body the exception filter passes through as it is.
   */
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: READINESS_DB_TIMEOUT_MS }),
      () => this.turnQueue(),
      ...(this.rateLimits instanceof RedisThrottlerStorage ? [() => this.redis()] : []),
    ]);
  }

  /**
   * The rate limits' Redis, when there is one: never down (requests pass without it), `degraded` with
   * the reason while it fails, since the limits are not checked then.
   */
  private redis(): HealthIndicatorResult {
    const state = (this.rateLimits as RedisThrottlerStorage).state;
    const details: Record<string, unknown> = state.available
      ? { degraded: false }
      : { degraded: true, problem: state.problem, effect: 'rate limits are not checked' };
    return this.indicators.check('redis').up(details);
  }

  private turnQueue(): HealthIndicatorResult {
    const indicator = this.indicators.check('turns');
    const details = { queued: this.turns.backlog };
    return this.turns.saturated ? indicator.down(details) : indicator.up(details);
  }
}
