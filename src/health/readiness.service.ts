import { Injectable } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';

export const READINESS_DB_TIMEOUT_MS = 2_000;

@Injectable()
export class ReadinessService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  /** Throws Terminus' 503 exception, whose body the exception filter passes through as it is. */
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: READINESS_DB_TIMEOUT_MS }),
    ]);
  }
}
