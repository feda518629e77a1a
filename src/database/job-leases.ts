import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { errorMessage } from '../common/error-message';

/**
 * Jobs that one replica must run at a time (memory decay, the embedding sweep, a profile's summary):
 * a job runs while its process holds the job's lease, a row in `job_leases` with an expiry. Taking the
 * lease is one statement, renewing it too; no connection is held while the job works (it may wait on an
 * LLM or embeddings call), and a process that dies leaves a lease that simply runs out.
 */
@Injectable()
export class JobLeases {
  private readonly logger = new Logger('JobLeases');
  /** This process, as a holder of leases. */
  readonly holder = randomUUID();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` when this process gets the job's lease, renewing it while the work goes on; the
   * signal aborts when the lease is lost. Returns false, without running it, when another holds it.
   */
  async runExclusive(
    name: string,
    leaseMs: number,
    work: (signal: AbortSignal) => Promise<void>,
  ): Promise<boolean> {
    if (!(await this.acquire(name, leaseMs))) return false;
    const lost = new AbortController();
    const renewal = setInterval(
      () => {
        this.renew(name, leaseMs).then(
          (held) => held || lost.abort(),
          (error: unknown) => this.logger.warn(`lease of ${name} not renewed: ${errorMessage(error)}`),
        );
      },
      Math.max(50, leaseMs / 3),
    );
    renewal.unref();
    try {
      await work(lost.signal);
    } finally {
      clearInterval(renewal);
      await this.release(name).catch((error: unknown) =>
        this.logger.warn(`lease of ${name} not released (it runs out by itself): ${errorMessage(error)}`),
      );
    }
    return true;
  }

  private async acquire(name: string, leaseMs: number): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO job_leases (name, holder, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000))
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE job_leases.expires_at < now() OR job_leases.holder = EXCLUDED.holder
       RETURNING holder`,
      [name, this.holder, leaseMs],
    );
    return rows.length > 0;
  }

  private async renew(name: string, leaseMs: number): Promise<boolean> {
    const [, renewed]: [unknown[], number] = await this.dataSource.query(
      `UPDATE job_leases SET expires_at = now() + make_interval(secs => $3::float8 / 1000)
       WHERE name = $1 AND holder = $2`,
      [name, this.holder, leaseMs],
    );
    return renewed > 0;
  }

  private async release(name: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM job_leases WHERE name = $1 AND holder = $2`, [
      name,
      this.holder,
    ]);
  }
}
