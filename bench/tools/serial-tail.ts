import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Pool } from 'undici';
import { startBenchUpstream } from '../fake-upstream';
import { percentile, round, runLoad } from '../load';
import type { WatchedSpan } from './serial-tail-watch';
import { saveResult } from '../results-file';
import { ServiceProcess } from '../service-process';
import { chatRequests, seed } from '../throughput.bench';

interface TimedChat {
  startUs: number;
  endUs: number;
}

/**
 * `node dist/bench/tools/serial-tail.js`: where the slowest chats of one request at a time lose their time.
 * The service runs on a new database of the PostgreSQL server (BENCH_ADMIN_URL), seeded as the
 * throughput suite seeds it, with `serial-tail-watch` preloaded (each `pg` query and GC pause, timed on
 * the clock the chats are timed on). After a warm-up (3,000 chats at 32 connections, 1,000 one at a
 * time) it sends SERIAL_TAIL_CHATS (default 3,000) chats one at a time (`skipExtraction`), then prints
 * and saves (bench/results/<time>-tail.json) the latency percentiles and, for the slowest 1 % and as
 * many chats at the median, how many overlapped a GC pause or each kind of query.
 *
 * SERIAL_TAIL_TRUST_MS (default 600,000) is the held profiles' trust, so that no chat asks the
 * database and the chats' own work is the same in every one; SERIAL_TAIL_MAIN runs another build;
 * SERIAL_TAIL_ENV adds the service's settings (space separated) and SERIAL_TAIL_DATABASE_SETTINGS
 * sets the database's (`synchronous_commit=off`, space separated).
 */
async function main(): Promise<void> {
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const chats = Number(process.env.SERIAL_TAIL_CHATS ?? '3000');
  // an empty setting is this build, as an unset one
  const otherBuild = process.env.SERIAL_TAIL_MAIN || undefined;
  const database = `pms_tail_${process.pid}`;
  const workDir = mkdtempSync(join(tmpdir(), 'pms-tail-'));
  const watchFile = join(workDir, 'watched.json');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  let upstream: Awaited<ReturnType<typeof startBenchUpstream>> | undefined;
  let service: ServiceProcess | undefined;
  try {
    for (const setting of settingsOf(process.env.SERIAL_TAIL_DATABASE_SETTINGS)) {
      const value = setting.value.replace(/'/g, "''");
      await admin.query(`ALTER DATABASE ${database} SET ${setting.name} = '${value}'`);
    }
    upstream = await startBenchUpstream();
    service = await ServiceProcess.start(
      {
        DATABASE_URL: `${adminUrl.replace(/\/[^/]*$/, '')}/${database}`,
        UPSTREAM_BASE_URL: upstream.url,
        UPSTREAM_API_KEY: 'bench',
        EXTRACTOR: 'heuristic',
        RATE_LIMIT_PER_MINUTE: '0',
        INGEST_RATE_LIMIT_PER_MINUTE: '0',
        CONTEXT_HELD_TRUST_MS: process.env.SERIAL_TAIL_TRUST_MS ?? '600000',
        SERIAL_TAIL_WATCH_FILE: watchFile,
        ...Object.fromEntries(settingsOf(process.env.SERIAL_TAIL_ENV).map((s) => [s.name, s.value])),
      },
      ['-r', join(__dirname, 'serial-tail-watch.js')],
      { stdoutFile: join(workDir, 'service.log'), main: otherBuild },
    );
    await seed(service.url);
    await admin.query('VACUUM ANALYZE');
    const next = chatRequests({ stream: false, skipExtraction: true, oneUser: false });
    await runLoad(service.url, 'warm-up', { requests: 3000, concurrency: 32, next });
    await runLoad(service.url, 'warm-up', { requests: 1000, concurrency: 1, next });
    const timed = await timeChats(service.url, chats, next);
    process.kill(service.pid!, 'SIGUSR2');
    const watched = await readWatched(watchFile);
    const report = {
      date: new Date().toISOString(),
      main: otherBuild ?? null,
      env: process.env.SERIAL_TAIL_ENV ?? null,
      databaseSettings: process.env.SERIAL_TAIL_DATABASE_SETTINGS ?? null,
      ...analyse(timed, watched),
    };
    console.log(JSON.stringify(report, null, 2));
    saveResult(report, 'tail');
  } finally {
    await service?.stop();
    await upstream?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function timeChats(
  url: string,
  count: number,
  next: ReturnType<typeof chatRequests>,
): Promise<TimedChat[]> {
  const pool = new Pool(url, { connections: 1, pipelining: 1 });
  const timed: TimedChat[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const spec = next(i);
      const startUs = Number(process.hrtime.bigint() / 1000n);
      const response = await pool.request({
        method: spec.method,
        path: spec.path,
        headers: { 'content-type': 'application/json', ...spec.headers },
        body: JSON.stringify(spec.body),
      });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`chat answered ${response.statusCode}`);
      timed.push({ startUs, endUs: Number(process.hrtime.bigint() / 1000n) });
    }
  } finally {
    await pool.close();
  }
  return timed;
}

async function readWatched(file: string): Promise<{ queries: WatchedSpan[]; pauses: WatchedSpan[] }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as { queries: WatchedSpan[]; pauses: WatchedSpan[] };
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Percentiles, and what the slowest 1 % and as many median chats overlapped. */
function analyse(timed: TimedChat[], watched: { queries: WatchedSpan[]; pauses: WatchedSpan[] }) {
  const from = timed[0].startUs;
  const queries = watched.queries.filter((query) => query.endUs >= from);
  const pauses = watched.pauses.filter((pause) => pause.endUs >= from);
  const latencies = timed.map((chat) => (chat.endUs - chat.startUs) / 1000);
  const byLatency = timed.map((chat, index) => ({ chat, ms: latencies[index] })).sort((a, b) => a.ms - b.ms);
  const sorted = byLatency.map(({ ms }) => ms);
  const slowCount = Math.max(1, Math.ceil(timed.length / 100));
  const middle = Math.floor(timed.length / 2 - slowCount / 2);
  const overlaps = (group: Array<{ chat: TimedChat }>) => {
    const overlapping = (spans: WatchedSpan[], chat: TimedChat) =>
      spans.filter((span) => span.startUs < chat.endUs && span.endUs > chat.startUs);
    const byQuery: Record<string, number> = {};
    let gc = 0;
    for (const { chat } of group) {
      if (overlapping(pauses, chat).length > 0) gc++;
      for (const what of new Set(overlapping(queries, chat).map((query) => query.what))) {
        byQuery[what] = (byQuery[what] ?? 0) + 1;
      }
    }
    return { chats: group.length, overlappingGc: gc, overlappingQuery: byQuery };
  };
  const queryKinds: Record<string, { count: number; p50Ms: number }> = {};
  const durations = new Map<string, number[]>();
  for (const query of queries) {
    const list = durations.get(query.what) ?? [];
    list.push((query.endUs - query.startUs) / 1000);
    durations.set(query.what, list);
  }
  for (const [what, list] of durations) {
    list.sort((a, b) => a - b);
    queryKinds[what] = { count: list.length, p50Ms: round(percentile(list, 0.5)) };
  }
  return {
    chats: timed.length,
    p50Ms: round(percentile(sorted, 0.5)),
    p90Ms: round(percentile(sorted, 0.9)),
    p99Ms: round(percentile(sorted, 0.99)),
    maxMs: round(sorted[sorted.length - 1]),
    gcPauses: pauses.length,
    queries: queryKinds,
    slowest: overlaps(byLatency.slice(-slowCount)),
    median: overlaps(byLatency.slice(middle, middle + slowCount)),
    slowestMs: byLatency
      .slice(-10)
      .reverse()
      .map(({ ms }) => round(ms)),
  };
}

function settingsOf(list: string | undefined): Array<{ name: string; value: string }> {
  return (list ?? '')
    .split(' ')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0 || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(pair.slice(0, at))) {
        throw new Error(`not a name=value setting: ${pair}`);
      }
      return { name: pair.slice(0, at), value: pair.slice(at + 1) };
    });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
