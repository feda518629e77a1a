import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { vector } from '@electric-sql/pglite-pgvector';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

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

/** Thrown when another live process holds the embedded database's directory. */
export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${pid}; two processes on one directory would lose writes.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/**
 * The embedded PostgreSQL (PGlite) in DATA_DIR. PGlite is single-session and has no protection against a
 * second process opening the same files, so the directory is locked with a pid file for the lifetime of
 * the instance.
 */
export class EmbeddedDatabase {
  private constructor(
    readonly pglite: PGlite,
    private readonly lockPath: string | null,
  ) {}

  static async open(dataDir: string): Promise<EmbeddedDatabase> {
    if (dataDir === IN_MEMORY_DATA_DIR) {
      const pglite = await PGlite.create({ extensions: EXTENSIONS, loadDataDir: inMemoryTemplate });
      return new EmbeddedDatabase(pglite, null);
    }
    mkdirSync(dataDir, { recursive: true });
    const lockPath = acquireLock(dataDir);
    try {
      return new EmbeddedDatabase(
        await PGlite.create({ dataDir: join(dataDir, 'pgdata'), extensions: EXTENSIONS }),
        lockPath,
      );
    } catch (error) {
      rmSync(lockPath, { force: true });
      throw error;
    }
  }

  /** The same, synchronously, for the TypeORM CLI whose data-source module must export a value. */
  static openSync(dataDir: string): EmbeddedDatabase {
    if (dataDir === IN_MEMORY_DATA_DIR)
      return new EmbeddedDatabase(new PGlite({ extensions: EXTENSIONS }), null);
    mkdirSync(dataDir, { recursive: true });
    const lockPath = acquireLock(dataDir);
    return new EmbeddedDatabase(new PGlite(join(dataDir, 'pgdata'), { extensions: EXTENSIONS }), lockPath);
  }

  async close(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
    if (this.lockPath) rmSync(this.lockPath, { force: true });
  }
}

function acquireLock(dataDir: string): string {
  const lockPath = join(dataDir, 'service.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return lockPath;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder))
        throw new DataDirLockedError(dataDir, holder);
      rmSync(lockPath, { force: true }); // left behind by a process that died
    }
  }
  throw new Error(`Could not lock DATA_DIR ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
