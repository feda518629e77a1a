import { Logger } from '@nestjs/common';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { elapsedSeconds } from '../common/display';
import { DataDirLock } from './data-dir-lock';
import { PgliteThread } from './pglite-thread';
import { HNSW_EF_SEARCH, HNSW_ITERATIVE_SCAN } from './session-settings';

export const IN_MEMORY_DATA_DIR = 'memory://';

/**
 * A dump of a migrated database that new in-memory databases start from. The tests set it once per
 * run: creating a database and migrating it costs seconds, loading a dump about one.
 */
let inMemoryTemplate: Blob | undefined;

export function startInMemoryDatabasesFrom(dump: Blob | undefined): void {
  inMemoryTemplate = dump;
}

/** The settings a server connection gets from its pool options (see session-settings.ts). */
const SESSION_SQL = `SET hnsw.iterative_scan = ${HNSW_ITERATIVE_SCAN}; SET hnsw.ef_search = ${HNSW_EF_SEARCH}`;

/**
 * The embedded PostgreSQL (PGlite) in DATA_DIR, on its own thread (PgliteThread), with the extensions
 * it can create (the migrations create btree_gin; pgvector is created when semantic search is
 * configured). PGlite is single-session and has no protection against a second process opening the
 * same files, so the directory is locked (DataDirLock) for the lifetime of the instance.
 */
export class EmbeddedDatabase {
  private constructor(
    readonly thread: PgliteThread,
    private readonly lock: DataDirLock | null,
  ) {}

  /** Opens (or creates) the database. Creating one takes seconds, so it is announced and timed. */
  static async open(dataDir: string): Promise<EmbeddedDatabase> {
    const created = dataDir !== IN_MEMORY_DATA_DIR && !existsSync(join(dataDir, 'pgdata', 'PG_VERSION'));
    const logger = new Logger('Database');
    const started = Date.now();
    if (created) logger.log('creating a new embedded database (first start only: a few seconds)');
    const embedded = EmbeddedDatabase.openSync(dataDir);
    try {
      await embedded.thread.waitReady;
    } catch (error) {
      embedded.lock?.release();
      throw error;
    }
    if (created) logger.log(`embedded database created in ${elapsedSeconds(started)}`);
    return embedded;
  }

  /**
   * The same, returned before the database is open (queries wait for it), for the TypeORM CLI whose
   * data-source module must export a value.
   */
  static openSync(dataDir: string): EmbeddedDatabase {
    if (dataDir === IN_MEMORY_DATA_DIR) {
      return new EmbeddedDatabase(
        new PgliteThread({ template: inMemoryTemplate, sessionSql: SESSION_SQL }),
        null,
      );
    }
    mkdirSync(dataDir, { recursive: true });
    const lock = DataDirLock.acquire(dataDir);
    try {
      const thread = new PgliteThread({ dataDir: join(dataDir, 'pgdata'), sessionSql: SESSION_SQL });
      return new EmbeddedDatabase(thread, lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.thread.close();
    this.lock?.release();
  }
}
