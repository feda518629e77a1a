import { DataSource } from 'typeorm';
import { APP_ENTITIES } from './src/app-entities';
import { loadConfig } from './src/config/app-config';
import { buildDataSourceOptions } from './src/database/data-source-options';
import { EmbeddedDatabase } from './src/database/embedded-database';

/**
 * The data source for the TypeORM CLI (`npm run migration:show`), built from the same options and the
 * same environment as the app: DATABASE_URL for a server, else the embedded database in DATA_DIR.
 */
const config = loadConfig(process.env);
const embedded = config.databaseUrl === null ? EmbeddedDatabase.openSync(config.dataDir) : null;
const dataSource = new DataSource({
  ...buildDataSourceOptions(
    embedded ? { embedded } : { databaseUrl: config.databaseUrl!, poolSize: config.databasePoolSize },
    { entities: APP_ENTITIES },
  ),
  migrationsRun: false,
});

if (embedded) {
  // The database's thread ends with the data source, and the data directory's lock is released.
  const destroy = dataSource.destroy.bind(dataSource);
  dataSource.destroy = async () => {
    await destroy();
    await embedded.close();
  };
}

export default dataSource;
