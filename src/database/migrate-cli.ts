import type { DataSourceOptions } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { errorMessage } from '../common/error-message';
import { buildDataSourceOptions } from './data-source-options';
import { EmbeddedDatabase } from './embedded-database';
import { DatabaseOptions, openMigratedDataSource } from './open-data-source';

/**
 * `node dist/src/database/migrate-cli.js` (`npm run migration:run`): applies the pending migrations as a
 * booting service does, under the migration lock (MIGRATION_LOCK_TIMEOUT_MS), then exits: 0 when the
 * schema is current, 1 with one line saying why not. The Helm chart's migration Job runs it, so that the
 * Job and replicas that start during an upgrade queue on one lock instead of racing.
 */
async function main(): Promise<void> {
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
    await dataSource.destroy();
  } finally {
    await embedded?.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`Migrations not applied: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
