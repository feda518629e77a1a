import { errorMessage } from '../common/error-message';
import { withMigratedDatabase } from './cli-data-source';

/**
 * `node dist/src/database/migrate-cli.js` (`npm run migration:run`): applies the pending migrations as a
 * booting service does, under the migration lock (MIGRATION_LOCK_TIMEOUT_MS), then exits: 0 when the
 * schema is current, 1 with one line saying why not. The Helm chart's migration Job runs it, so that the
 * Job and replicas that start during an upgrade queue on one lock instead of racing.
 */
async function main(): Promise<void> {
  await withMigratedDatabase(() => Promise.resolve());
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`Migrations not applied: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
