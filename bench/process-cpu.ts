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

/** CPU time used so far by every PostgreSQL server process on the machine (backends and workers), in ms. */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (command.startsWith('postgres')) total += cpuOfStat(stat);
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

function cpuOfStat(stat: string): number {
  // fields after the command: state is the 1st, utime the 12th, stime the 13th
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}
