import { Logger } from '@nestjs/common';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { EmbeddedDatabase, IN_MEMORY_DATA_DIR } from '../../src/database/embedded-database';
import { migrate } from '../../src/database/migrate';

/** Names the file that holds this run's dump of a migrated embedded database. */
export const TEMPLATE_ENV = 'PMS_TEST_PGLITE_TEMPLATE';

/**
 * Global setup of the embedded suites: migrate one in-memory database and dump it, so that every test
 * app loads the dump (about a second) instead of creating and migrating a database (about four).
 */
export default async function createEmbeddedTemplate(): Promise<void> {
  Logger.overrideLogger(false); // the migration lines would land between Jest's
  const embedded = await EmbeddedDatabase.open(IN_MEMORY_DATA_DIR);
  const dataSource = new DataSource(buildDataSourceOptions({ embedded }));
  await dataSource.initialize();
  await migrate(dataSource, 60_000);
  await dataSource.destroy();
  const dump = await embedded.thread.dumpDataDir();
  await embedded.close();
  const file = join(tmpdir(), `pms-test-pglite-${process.pid}.tar`);
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  process.env[TEMPLATE_ENV] = file;
  // TypeORM keeps its decorators' metadata on the global object, here Jest's own. Jest gives each test
  // file the globals it finds there, so a run in band would share this storage between files, and
  // every file's entity classes, with all they reach, would stay in it until the run ends.
  delete (globalThis as { typeormMetadataArgsStorage?: unknown }).typeormMetadataArgsStorage;
}
