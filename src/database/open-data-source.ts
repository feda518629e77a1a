import { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { migrate } from './migrate';

/** The database module's options, plus what `openMigratedDataSource` needs (a factory cannot inject). */
export type DatabaseOptions = TypeOrmModuleOptions & { migrationLockTimeoutMs: number };

/** The database could not be reached at boot; the message names the server, never its credentials. */
export class DatabaseUnreachableError extends Error {
  constructor(options: DataSourceOptions, cause: unknown) {
    const url = 'url' in options && options.url ? new URL(options.url) : null;
    const target = url
      ? `the PostgreSQL server at ${url.hostname}:${url.port || '5432'}`
      : 'the embedded database';
    super(`Cannot connect to ${target}: ${(cause as Error).message}`, { cause });
    this.name = 'DatabaseUnreachableError';
  }
}

/**
 * Connects, then applies pending migrations under the migration lock (see migrate.ts). On the embedded
 * database, claims and leases left by an earlier process are released: the DATA_DIR lock lets one
 * process at a time open it, so every claim found at boot is a dead process's.
 */
export async function openMigratedDataSource(options?: DataSourceOptions): Promise<DataSource> {
  const dataSource = new DataSource(options!);
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new DatabaseUnreachableError(options!, error);
  }
  try {
    await migrate(dataSource, (options as unknown as DatabaseOptions).migrationLockTimeoutMs);
    if (!('url' in options! && options.url)) await releaseClaimsOfEarlierProcesses(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

async function releaseClaimsOfEarlierProcesses(dataSource: DataSource): Promise<void> {
  await dataSource.query(
    `UPDATE messages SET claimed_until = NULL, claim_token = NULL WHERE claimed_until IS NOT NULL`,
  );
  await dataSource.query(`UPDATE memory_embeddings SET claimed_until = NULL WHERE claimed_until IS NOT NULL`);
  await dataSource.query(`DELETE FROM job_leases`);
}
