import { Logger } from '@nestjs/common';
import { DataSource, MigrationExecutor, QueryRunner } from 'typeorm';
import { elapsedSeconds } from '../common/display';

/**
 * Key of the session advisory lock that migrations run under, on the server and on PGlite alike. Any
 * fixed number works as long as nothing else in the database uses it.
 */
export const MIGRATION_LOCK_KEY = '7306010500000001';

/** PostgreSQL's lock_not_available: a lock not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/** A boot that cannot migrate: retrying the connection would not help, so it is not retried. */
export class MigrationError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/**
 * Applies the pending migrations, each in its own transaction, while holding a session advisory lock.
 * Replicas that start together on one server queue on the lock: the first applies the migrations, the
 * others find nothing pending when their turn comes. Waiting is bounded by `lockTimeoutMs`. The lock
 * and the migrations use one connection, so this works on the embedded database's single session too.
 */
export async function migrate(dataSource: DataSource, lockTimeoutMs: number): Promise<void> {
  const logger = new Logger('Database');
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await takeMigrationLock(runner, lockTimeoutMs);
    try {
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      const pending = await executor.getPendingMigrations();
      if (pending.length === 0) {
        logger.debug(`schema up to date (${dataSource.migrations.length} migrations)`);
        return;
      }
      const started = Date.now();
      logger.log(`applying ${pending.length} migrations`);
      await executor.executePendingMigrations();
      logger.log(`applied ${pending.length} migrations in ${elapsedSeconds(started)}`);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`Migrations failed: ${(error as Error).message}`, { cause: error });
  } finally {
    await runner.release();
  }
}

/**
 * Takes the lock within `timeoutMs`. A session lock outlives the transaction it was taken in, which
 * exists only to scope `lock_timeout` to this one wait.
 */
async function takeMigrationLock(runner: QueryRunner, timeoutMs: number): Promise<void> {
  await runner.startTransaction();
  try {
    await runner.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await runner.commitTransaction();
  } catch (error) {
    await runner.rollbackTransaction();
    if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) {
      throw new MigrationError(
        `Migrations: another process has held the migration lock for more than ${timeoutMs} ms ` +
          '(MIGRATION_LOCK_TIMEOUT_MS); it may still be migrating a large table.',
        { cause: error },
      );
    }
    throw error;
  }
}
