// The module object itself (not an import's copy of it), so that spies on it reach the code under test.
// eslint-disable-next-line @typescript-eslint/no-require-imports
import fs = require('node:fs');
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLock, DataDirLockedError, LOCK_FILE } from './data-dir-lock';

/** A pid that no process has (above the kernel's pid_max). */
const GONE = 99_999_999;

describe('DataDirLock', () => {
  let dir: string;
  let lockFile: string;
  const holderOf = () => readFileSync(lockFile, 'utf8').split('\n')[0];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pms-lock-'));
    lockFile = join(dir, LOCK_FILE);
  });

  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes our pid, refuses a second holder in this process, and is free again once released', () => {
    const lock = DataDirLock.acquire(dir);
    expect(holderOf()).toBe(String(process.pid));
    expect(() => DataDirLock.acquire(dir)).toThrow(DataDirLockedError);
    lock.release();
    expect(fs.existsSync(lockFile)).toBe(false);
    DataDirLock.acquire(dir).release();
  });

  it('refuses a directory held by another live process, naming it', () => {
    writeFileSync(lockFile, String(process.ppid)); // as earlier versions wrote it: the pid alone
    expect(() => DataDirLock.acquire(dir)).toThrow(`is in use by process ${process.ppid}`);
    expect(holderOf()).toBe(String(process.ppid));
  });

  it.each([
    ['a process that is gone', `${GONE}\nold\n`],
    ['our own pid (an earlier process with this pid: PID 1 in a restarted container)', String(process.pid)],
    ['no pid at all', 'garbage'],
  ])('takes over a lock left by %s', (_label, content) => {
    writeFileSync(lockFile, content);
    const lock = DataDirLock.acquire(dir);
    expect(holderOf()).toBe(String(process.pid));
    lock.release();
  });

  it('never lets the lock file exist without the pid of its holder', () => {
    // What a process starting at the same moment could read: checked after every file-system call.
    const seen: string[] = [];
    let checking = false;
    const check = () => {
      if (checking) return;
      checking = true;
      try {
        if (fs.existsSync(lockFile)) seen.push(fs.readFileSync(lockFile, 'utf8').split('\n')[0]);
      } finally {
        checking = false;
      }
    };
    const mutable = fs as unknown as Record<string, unknown>;
    const names = Object.keys(fs).filter((key) => key.endsWith('Sync') && typeof mutable[key] === 'function');
    for (const name of names) {
      const original = mutable[name] as (...args: unknown[]) => unknown;
      jest.spyOn(fs as never, name as never).mockImplementation(((...args: unknown[]) => {
        const result = original(...args);
        check();
        return result;
      }) as never);
    }
    const lock = DataDirLock.acquire(dir);
    jest.restoreAllMocks();
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([String(process.pid)]));
    lock.release();
  });

  it('does not clear a lock that another process took over after we judged the old one stale', () => {
    writeFileSync(lockFile, `${GONE}\nold\n`);
    const taken = `${process.ppid}\ntaken-over-meanwhile\n`;
    const realRead = fs.readFileSync;
    let reads = 0;
    jest.spyOn(fs, 'readFileSync').mockImplementation((...args: Parameters<typeof realRead>) => {
      const result = realRead(...args);
      // Right after our first look at the stale lock, a live process clears it and takes the directory.
      if (args[0] === lockFile && ++reads === 1) {
        rmSync(lockFile);
        writeFileSync(lockFile, taken);
      }
      return result;
    });
    expect(() => DataDirLock.acquire(dir)).toThrow(`is in use by process ${process.ppid}`);
    jest.restoreAllMocks();
    expect(readFileSync(lockFile, 'utf8')).toBe(taken);
  });
});
