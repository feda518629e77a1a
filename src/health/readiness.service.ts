import { Injectable } from '@nestjs/common';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { TurnRecorder } from '../messages/turn-recorder';

export const READINESS_DB_TIMEOUT_MS = 2_000;

@Injectable()
export class ReadinessService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly turns: TurnRecorder,
  ) {}

  /**
   * Ready when the database answers within its timeout and completed turns are being stored as fast as
   * they come (a full queue means requests are waiting: send traffic elsewhere). Throws Terminus' 503
   * exception, whose body the exception filter passes through as it is.
   */
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: READINESS_DB_TIMEOUT_MS }),
      () => this.turnQueue(),
    ]);
  }

  private turnQueue(): HealthIndicatorResult {
    const indicator = this.indicators.check('turns');
    const details = { queued: this.turns.backlog };
    return this.turns.saturated ? indicator.down(details) : indicator.up(details);
  }
}
