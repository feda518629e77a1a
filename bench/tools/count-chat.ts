import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startBenchUpstream } from '../fake-upstream';
import { runLoad } from '../load';
import { ServiceProcess, THIS_BUILD_MAIN } from '../service-process';
import { chatRequests, seed, waitForQuiet } from '../throughput.bench';

/**
 * `node dist/bench/tools/count-chat.js`: the instructions the service executes per chat, counted by valgrind's
 * callgrind, where time-based measures on a shared 2-vCPU machine vary by a fifth from round to round.
 * The service runs under callgrind on the PostgreSQL server (a database of its own, seeded as the
 * throughput suite seeds it), uninstrumented through its start and a warm-up; each round then turns
 * the counting on, runs the chats, waits for the work they left, and dumps the counts per thread. The
 * main thread's count is the relay's own work; V8's compilation (mostly on its worker threads) and the
 * other threads are printed apart. Kernel time is not counted. The counted chats run about a hundred
 * times slower than natively (1,000 in 40 to 55 s), so what the service does by the clock comes about
 * a hundred times more often per chat: held profiles' trust is stretched to match (below); turns are
 * still gathered for 20 ms, into smaller batches than natively, and memories touched once a minute
 * are touched more often per chat. Settings:
 * - DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres): the server;
 * - COUNT_MAIN: the build to count (another build's main.js), else this one;
 * - COUNT_REQUESTS (default 1000) per round, COUNT_ROUNDS (default 3), COUNT_WARM_UP (default 4000),
 *   COUNT_CONCURRENCY (default 8);
 * - COUNT_STREAM=1: streamed answers; COUNT_LEARN=1: the turns are learnt from (one in ten tells a fact);
 * - COUNT_HELD_TRUST_MS (default 500000): the service's CONTEXT_HELD_TRUST_MS, a hundred times its
 *   default, as the chats are slowed down (with the default, every chat asks the database);
 * - COUNT_TOP (default 0): the main thread's N costliest functions of the last round, compilation left
 *   out; COUNT_NAMES=1 names the JIT's code (`--perf-basic-prof`, whose map writing raises the counts:
 *   compare totals without it).
 */
async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const requests = Number(process.env.COUNT_REQUESTS ?? '1000');
  const rounds = Number(process.env.COUNT_ROUNDS ?? '3');
  const concurrency = Number(process.env.COUNT_CONCURRENCY ?? '8');
  const stream = process.env.COUNT_STREAM === '1';
  const dir = mkdtempSync(join(tmpdir(), 'pms-count-'));
  const upstream = await startBenchUpstream();
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  const database = `pms_count_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const env = {
    DATABASE_URL: adminUrl.replace(/\/[^/]*$/, `/${database}`),
    UPSTREAM_BASE_URL: upstream.url,
    UPSTREAM_API_KEY: 'bench',
    EXTRACTOR: 'heuristic',
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'info',
    // Chats run about a hundred times slower under callgrind, so a held profile's trust (5 s) would run
    // out between two chats of one user and every chat would ask the database; natively 3 % ask.
    CONTEXT_HELD_TRUST_MS: process.env.COUNT_HELD_TRUST_MS ?? '500000',
  };
  let counted: Counted | null = null;
  try {
    // seeded natively: under valgrind the seeding alone would take many minutes
    const seeding = await ServiceProcess.start(env, [], { stdoutFile: join(dir, 'seeding.log') });
    await seed(seeding.url);
    await seeding.stop();
    counted = await Counted.start(env, process.env.COUNT_MAIN ?? THIS_BUILD_MAIN, dir);
    const next = chatRequests({ stream, skipExtraction: process.env.COUNT_LEARN !== '1', oneUser: false });
    const warmUp = Number(process.env.COUNT_WARM_UP ?? '4000');
    await runLoad(counted.url, 'warm-up', { requests: warmUp, concurrency, next, firstChunk: stream });
    await waitForQuiet(counted.url);
    for (let round = 1; round <= rounds; round++) {
      counted.control('-i', 'on');
      counted.control('-z');
      const offset = warmUp + (round - 1) * requests;
      const result = await runLoad(counted.url, 'counted', {
        requests,
        concurrency,
        next: (i) => next(offset + i),
        firstChunk: stream,
      });
      // few scrapes: a scrape costs the service as much as hundreds of chats under callgrind (the event
      // loop delay's statistics), and those counted here would be charged to the chats
      const scrapes = await waitForQuiet(counted.url, QUIET_POLL_MS, 600_000);
      counted.control('-d');
      counted.control('-i', 'off');
      const { byThread, top } = countsOf(dir, counted.pid, round, Number(process.env.COUNT_TOP ?? '0'));
      const perChat = (instructions: number) => `${Math.round(instructions / requests / 1000)}k`;
      console.log(
        `round ${round}: ${result.errors} errors; instructions per chat: main thread ${perChat(byThread.main)}, ` +
          `compiling on it ${perChat(byThread.mainCompiling)}; other threads ${perChat(byThread.other)}, ` +
          `compiling on them ${perChat(byThread.otherCompiling)}; ${scrapes} scrape(s) of /metrics counted`,
      );
      if (round === rounds) {
        for (const [name, instructions] of top)
          console.log(`  ${perChat(instructions).padStart(6)}  ${name}`);
      }
    }
  } finally {
    await counted?.stop();
    await upstream.close();
    await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
    await admin.end();
  }
}

/** The service under callgrind, its counting off until `control('-i', 'on')`. */
class Counted {
  private constructor(private readonly service: ServiceProcess) {}

  get url(): string {
    return this.service.url;
  }

  get pid(): number {
    return this.service.pid!;
  }

  static async start(env: Record<string, string>, main: string, dir: string): Promise<Counted> {
    const callgrind = [
      'valgrind',
      '--tool=callgrind',
      // V8's generated code changes in place
      '--smc-check=all-non-file',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--log-file=${join(dir, 'valgrind.log')}`,
      `--callgrind-out-file=${join(dir, 'callgrind.%p')}`,
    ];
    // names the JIT's code in /tmp/perf-<pid>.map, where callgrind sees only addresses
    const names = process.env.COUNT_NAMES === '1' ? ['--perf-basic-prof'] : [];
    const service = await ServiceProcess.start({ ...env, ...VGDB_NAMES }, names, {
      main,
      launcher: callgrind,
      stdoutFile: join(dir, 'service.log'),
      readyWithinMs: 300_000,
    });
    return new Counted(service);
  }

  /** callgrind_control's command for the service's process. */
  control(...args: string[]): void {
    // vgdb finds the process by files named after the user and host in the environment, as valgrind named them
    execFileSync('callgrind_control', [...args, String(this.pid)], {
      env: { ...process.env, ...VGDB_NAMES, HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
  }

  stop(): Promise<void> {
    return this.service.stop();
  }
}

const VGDB_NAMES = { USER: 'root', LOGNAME: 'root' };

/** How often a round asks whether the service's background work is done. */
const QUIET_POLL_MS = 3_000;

/** V8's parsing and compiling, by the names of its C++ parts. */
const COMPILING =
  /compiler::|maglev::|Maglev|Turbofan|Zone|interpreter::|Parser|Scanner|BytecodeGenerator|OptimizedCompilationJob/;

/**
 * The counts of the round's dump, by thread (thread 1 is the main thread) and compiling or not, and the
 * main thread's `topCount` costliest functions apart from compiling.
 */
function countsOf(
  dir: string,
  pid: number,
  round: number,
  topCount: number,
): {
  byThread: { main: number; mainCompiling: number; other: number; otherCompiling: number };
  top: Array<[string, number]>;
} {
  const byThread = { main: 0, mainCompiling: 0, other: 0, otherCompiling: 0 };
  const mainFunctions = new Map<string, number>();
  const jitName = jitNames(pid);
  for (const file of readdirSync(dir).filter((name) => name.startsWith(`callgrind.${pid}.${round}-`))) {
    const main = file.endsWith('-01');
    const report = execFileSync('callgrind_annotate', ['--threshold=100', join(dir, file)], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    for (const line of report.split('\n')) {
      const row = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/.exec(line);
      if (!row || row[2].startsWith('PROGRAM TOTALS')) continue;
      const instructions = Number(row[1].replaceAll(',', ''));
      const compiling = COMPILING.test(row[2]);
      if (main && !compiling) {
        const name = jitName(row[2].replace(/^\?\?\?:/, ''));
        mainFunctions.set(name, (mainFunctions.get(name) ?? 0) + instructions);
      }
      if (main) byThread[compiling ? 'mainCompiling' : 'main'] += instructions;
      else byThread[compiling ? 'otherCompiling' : 'other'] += instructions;
    }
  }
  const top = [...mainFunctions].sort((a, b) => b[1] - a[1]).slice(0, topCount);
  return { byThread, top };
}

/**
 * The name of the JIT's code at an address callgrind printed (`0x...`), from node's perf map (the last
 * code object there that covers it: code moves and is replaced as the JIT works); else the text as it is.
 */
function jitNames(pid: number): (text: string) => string {
  let ranges: Array<{ start: number; end: number; name: string }>;
  try {
    ranges = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
      .split('\n')
      .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
      .filter((match) => match !== null)
      .map(([, start, size, name]) => ({
        start: parseInt(start, 16),
        end: parseInt(start, 16) + parseInt(size, 16),
        name,
      }));
  } catch {
    return (text) => text;
  }
  return (text) => {
    const address = /^0x([0-9a-f]+) /.exec(text);
    if (!address) return text;
    const at = parseInt(address[1], 16);
    for (let i = ranges.length - 1; i >= 0; i--) {
      if (ranges[i].start <= at && at < ranges[i].end) return `${ranges[i].name} (JIT)`;
    }
    return text;
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
