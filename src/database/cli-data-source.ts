import type { DataSource, DataSourceOptions } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { buildDataSourceOptions } from './data-source-options';
import { EmbeddedDatabase } from './embedded-database';
import { DatabaseOptions, openMigratedDataSource } from './open-data-source';

/**
 * For a command-line tool: the database the environment names (DATABASE_URL, else the embedded one in
 * DATA_DIR), migrated as a booting service does, under the migration lock (MIGRATION_LOCK_TIMEOUT_MS),
 * handed to `work` and closed after it.
 */
export async function withMigratedDatabase<T>(work: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const embedded = config.databaseUrl === null ? await EmbeddedDatabase.open(config.dataDir) : null;
  try {
    const options: DatabaseOptions = {
      ...buildDataSourceOptions(embedded ? { embedded } : { databaseUrl: config.databaseUrl!, poolSize: 1 }, {
        acquireTimeoutMs: config.databaseAcquireTimeoutMs,
      }),
      migrationLockTimeoutMs: config.migrationLockTimeoutMs,
    };
    const dataSource = await openMigratedDataSource(options as DataSourceOptions);
    try {
      return await work(dataSource);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await embedded?.close();
  }
}
