import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Thrown when another live process holds the embedded database's directory. */
export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${pid}; two processes on one directory would lose writes.`,
    );
    this.name = 'DataDirLockedError';
  }
}

export const LOCK_FILE = 'service.lock';

/** Lock files held by this process: a second open in the same process is refused, not taken over. */
const heldByThisProcess = new Set<string>();

/** Rounds of "create, or judge the holder and clear a stale lock" before giving up. */
const ATTEMPTS = 20;

/**
 * The embedded database's directory lock: `DATA_DIR/service.lock` holds the pid of the process using
 * the directory (first line) and a random token (second line) that tells one holding from another.
 *
 * - The file is created with its content in one step (written beside it, then hard-linked to its name,
 *   which fails if the name exists), so a process can never see an empty lock and take it for stale:
 *   of several processes starting at once on one directory, exactly one gets it.
 * - A lock is stale when its process is gone, or when it names this process's own pid: the lock is not
 *   ours (we check that first), so it was left by an earlier process that had the same pid. That is the
 *   container case: node runs as PID 1, and after a kill the restarted process is PID 1 again.
 * - Clearing a stale lock is done by one process at a time (an exclusive `service.lock.takeover` file)
 *   and only if the lock is still the one judged stale, so two processes that judged the same stale lock
 *   cannot both clear it and both take the directory.
 *
 * Pids are only meaningful within one PID namespace: the lock protects a directory on one host or in one
 * container, not a volume shared by several containers at once.
 */
export class DataDirLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string): DataDirLock {
    const path = join(dataDir, LOCK_FILE);
    if (heldByThisProcess.has(path)) throw new DataDirLockedError(dataDir, process.pid);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (createWithContent(path, `${process.pid}\n${randomUUID()}\n`)) {
        heldByThisProcess.add(path);
        return new DataDirLock(path);
      }
      const content = readIfPresent(path);
      if (content === null) continue; // released meanwhile: try again
      const holder = holderPid(content);
      if (holder !== null && isAnotherLiveProcess(holder)) throw new DataDirLockedError(dataDir, holder);
      if (!clearStaleLock(path, content)) pause(10);
    }
    throw new Error(`Could not lock DATA_DIR ${dataDir}: its lock file kept changing`);
  }

  release(): void {
    rmSync(this.path, { force: true });
    heldByThisProcess.delete(this.path);
  }
}

/** Creates `path` with `content` in one step; false when it exists. */
function createWithContent(path: string, content: string): boolean {
  const draft = `${path}.${process.pid}.${randomUUID()}.draft`;
  writeFileSync(draft, content);
  try {
    linkSync(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

function readIfPresent(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The pid on the first line; null for anything else (a lock nobody can hold). */
function holderPid(content: string): number | null {
  const line = content.split('\n', 1)[0].trim();
  if (!/^\d{1,10}$/.test(line)) return null;
  const pid = Number(line);
  return pid > 0 ? pid : null;
}

function isAnotherLiveProcess(pid: number): boolean {
  if (pid === process.pid) return false; // not ours (checked above): left by an earlier process
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the lock if it still has the content judged stale, one process at a time; false when another
 * process is doing it.
 */
function clearStaleLock(path: string, staleContent: string): boolean {
  const takeover = `${path}.takeover`;
  if (!createWithContent(takeover, `${process.pid}\n`)) {
    // Another process is clearing it. Its takeover lasts microseconds; one left by a process that died
    // in between names a process that is gone.
    const content = readIfPresent(takeover);
    const holder = content === null ? null : holderPid(content);
    if (content !== null && (holder === null || !isAnotherLiveProcess(holder))) {
      rmSync(takeover, { force: true });
    }
    return false;
  }
  try {
    if (readIfPresent(path) === staleContent) rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(takeover, { force: true });
  }
}

/** Blocks for `ms` (acquire is synchronous: the TypeORM CLI opens the database at import time). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
