import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { vector } from '@electric-sql/pglite-pgvector';
import { Logger } from '@nestjs/common';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { elapsedSeconds } from '../common/display';
import { DataDirLock } from './data-dir-lock';
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

/**
 * Extensions PGlite can create (the migrations create btree_gin; pgvector is created when semantic
 * search is configured). They are loaded from the packages, nothing is downloaded.
 */
const EXTENSIONS = { btree_gin, vector };

/**
 * The embedded PostgreSQL (PGlite) in DATA_DIR. PGlite is single-session and has no protection against a
 * second process opening the same files, so the directory is locked (DataDirLock) for the lifetime of
 * the instance.
 */
export class EmbeddedDatabase {
  private constructor(
    readonly pglite: PGlite,
    private readonly lock: DataDirLock | null,
  ) {}

  /**
   * Opens (or creates) the database. Creating one takes seconds during which PGlite blocks the event
   * loop, so it is announced before it starts and timed when it ends.
   */
  static async open(dataDir: string): Promise<EmbeddedDatabase> {
    if (dataDir === IN_MEMORY_DATA_DIR) {
      const pglite = await PGlite.create({ extensions: EXTENSIONS, loadDataDir: inMemoryTemplate });
      await applySessionSettings(pglite);
      return new EmbeddedDatabase(pglite, null);
    }
    mkdirSync(dataDir, { recursive: true });
    const lock = DataDirLock.acquire(dataDir);
    try {
      const pgdata = join(dataDir, 'pgdata');
      const logger = new Logger('Database');
      const created = !existsSync(join(pgdata, 'PG_VERSION'));
      const started = Date.now();
      if (created) {
        logger.log('creating a new embedded database (first start only: a few seconds)');
      }
      const pglite = await PGlite.create({ dataDir: pgdata, extensions: EXTENSIONS });
      if (created) logger.log(`embedded database created in ${elapsedSeconds(started)}`);
      await applySessionSettings(pglite);
      return new EmbeddedDatabase(pglite, lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The same, synchronously, for the TypeORM CLI whose data-source module must export a value. */
  static openSync(dataDir: string): EmbeddedDatabase {
    if (dataDir === IN_MEMORY_DATA_DIR)
      return new EmbeddedDatabase(new PGlite({ extensions: EXTENSIONS }), null);
    mkdirSync(dataDir, { recursive: true });
    const lock = DataDirLock.acquire(dataDir);
    return new EmbeddedDatabase(new PGlite(join(dataDir, 'pgdata'), { extensions: EXTENSIONS }), lock);
  }

  async close(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
    this.lock?.release();
  }
}

/** The settings a server connection gets from its pool options (see session-settings.ts). */
async function applySessionSettings(pglite: PGlite): Promise<void> {
  await pglite.exec(
    `SET hnsw.iterative_scan = ${HNSW_ITERATIVE_SCAN}; SET hnsw.ef_search = ${HNSW_EF_SEARCH}`,
  );
}
