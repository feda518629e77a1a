import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) used so far by one process, in ms; NaN when it cannot be read. */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time used so far by the PostgreSQL server on this machine, in ms: its live processes (backends and
 * workers), and the backends that have ended, which the postmaster has counted as its children's time.
 * Every `postgres` process counts (there is one cluster here); NaN when there is none (a server on
 * another machine). With `database`, only the backends connected to that database and the server's own
 * processes (WAL writer, checkpointer and the like, not another database's autovacuum) count, so that other databases' work on the same
 * server does not: backends that have ended are then not counted.
 */
export function postgresCpuMs(database?: string): number {
  const processes = new Map<number, { parent: number; own: number; children: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!command.startsWith('postgres')) continue;
      if (database !== undefined && !servesDatabase(Number(entry), database)) continue;
      const fields = statFields(stat);
      processes.set(Number(entry), {
        parent: Number(fields[1]),
        own: ticksToMs(Number(fields[11]) + Number(fields[12])),
        children: ticksToMs(Number(fields[13]) + Number(fields[14])),
      });
    } catch {
      // the process ended meanwhile
    }
  }
  if (processes.size === 0) return Number.NaN;
  let total = 0;
  for (const process of processes.values()) {
    total += process.own;
    if (database === undefined && !processes.has(process.parent)) total += process.children; // the postmaster
  }
  return total;
}

/**
 * Whether a PostgreSQL process counts for `database`: a backend names its user, database and client in
 * its title (`postgres: 15/main: user database 127.0.0.1(5432) idle`); the server's own processes name
 * no client.
 */
function servesDatabase(pid: number, database: string): boolean {
  const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  if (title.split(/\s+/).includes(database)) return true;
  const client = /\s(?:\S+\(\d+\)|\[local\])(?:\s|$)/.test(title);
  return !client && !/autovacuum worker|parallel worker/.test(title);
}

/** The fields of /proc/<pid>/stat after the command: state first, then ppid, ..., utime is the 12th. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function cpuOfStat(stat: string): number {
  const fields = statFields(stat);
  return ticksToMs(Number(fields[11]) + Number(fields[12]));
}

function ticksToMs(ticks: number): number {
  return (ticks * 1000) / TICKS_PER_SECOND;
}
