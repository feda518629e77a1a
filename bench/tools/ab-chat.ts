import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startBenchUpstream } from '../fake-upstream';
import { runLoad } from '../load';
import { postgresCpuMs, processCpuMs } from '../process-cpu';
import { saveResult } from '../results-file';
import { ServiceProcess, THIS_BUILD_MAIN } from '../service-process';
import { chatRequests, seed, waitForQuiet } from '../throughput.bench';

type Side = 'a' | 'b';

interface Round {
  throughput: number;
  /** Latency at the client: to the first chunk with AB_STREAM=1, else to the whole answer. */
  p50Ms: number;
  p99Ms: number;
  nodeCpuMs: number;
  postgresCpuMs: number;
  /** Statements that stored the round's turns, per chat: how turns were batched (1 when each went alone). */
  turnWritesPerChat: number;
  errors: number;
}

interface Settings {
  adminUrl: string;
  upstreamUrl: string;
  logDir: string;
  rounds: number;
  requests: number;
  connections: number;
  learns: Record<Side, boolean>;
  stream: boolean;
}

/**
 * `node dist/bench/tools/ab-chat.js`: two builds of the service side by side on the PostgreSQL server, each on
 * a database of its own seeded as the throughput suite seeds it, under the same chat load (100 users,
 * `skipExtraction` unless AB_LEARN=1, or for B only with AB_LEARN=b (the suite's turns, one in ten
 * telling a fact), streamed with AB_STREAM=1) in rounds that alternate A and B, so that both see the same
 * machine. A is this build; B is AB_B_MAIN (another build's main.js), AB_B_NODE_ARGS (e.g.
 * `--max-semi-space-size=32`) and/or AB_B_ENV (e.g. `DATABASE_CONTEXT_POOL_SIZE=4`, space separated; AB_A_ENV the same for A), all
 * at LOG_LEVEL=warn unless their env says otherwise (the log lines go to a file, as a collector would take
 * them). AB_ROUNDS (default 6) rounds of AB_REQUESTS (default 4000) chats on AB_CONNECTIONS (default 32;
 * 1 for one request at a time) size a pair of processes; AB_PAIRS (default 1) pairs run one after the
 * other, each on new processes and databases, B started first in every other pair. Two processes of
 * one build can differ by a tenth in throughput on this VM, so a difference that small needs several
 * pairs. Prints and saves (bench/results/<time>-ab.json) the rounds, the medians of each pair and of
 * all rounds.
 */
async function main(): Promise<void> {
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const pairs = Number(process.env.AB_PAIRS ?? '1');
  const upstream = await startBenchUpstream();
  const settings: Settings = {
    adminUrl,
    upstreamUrl: upstream.url,
    logDir: mkdtempSync(join(tmpdir(), 'pms-ab-logs-')),
    rounds: Number(process.env.AB_ROUNDS ?? '6'),
    requests: Number(process.env.AB_REQUESTS ?? '4000'),
    connections: Number(process.env.AB_CONNECTIONS ?? '32'),
    learns: { a: process.env.AB_LEARN === '1', b: ['1', 'b'].includes(process.env.AB_LEARN ?? '') },
    stream: process.env.AB_STREAM === '1',
  };
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const rounds: Array<Record<Side, Round[]>> = [];
    for (let pair = 0; pair < pairs; pair++) {
      rounds.push(await runPair(admin, settings, pair % 2 === 0 ? ['a', 'b'] : ['b', 'a']));
      const medians = { a: summary(rounds[pair].a), b: summary(rounds[pair].b) };
      console.log(`pair ${pair + 1}: a ${medians.a.throughput}, b ${medians.b.throughput} req/s`);
    }
    const all = { a: rounds.flatMap((pair) => pair.a), b: rounds.flatMap((pair) => pair.b) };
    const report = {
      date: new Date().toISOString(),
      a: { env: envList(process.env.AB_A_ENV) },
      b: {
        main: process.env.AB_B_MAIN ?? null,
        nodeArgs: process.env.AB_B_NODE_ARGS ?? null,
        env: envList(process.env.AB_B_ENV),
      },
      learns: settings.learns,
      stream: settings.stream,
      connections: settings.connections,
      requests: settings.requests,
      pairs: rounds.map((pair) => ({
        rounds: pair,
        median: { a: summary(pair.a), b: summary(pair.b) },
      })),
      median: { a: summary(all.a), b: summary(all.b) },
    };
    for (const side of ['a', 'b'] as const) {
      const m = report.median[side];
      console.log(
        `${side}: ${all[side].map((x) => Math.round(x.throughput)).join(' ')} req/s; median ${m.throughput} req/s ` +
          `(p50 / p99 ${m.p50Ms} / ${m.p99Ms} ms${settings.stream ? ' to the first chunk' : ''}), ` +
          `CPU ms per chat ${m.nodeCpuMs} Node + ${m.postgresCpuMs} PostgreSQL, ` +
          `${m.turnWritesPerChat} turn writes per chat, ${m.errors} errors`,
      );
    }
    saveResult(report, 'ab');
  } finally {
    rmSync(settings.logDir, { recursive: true, force: true });
    await upstream.close();
    await admin.end();
  }
}

/** One pair of service processes, started in `order`, each on a new database: their rounds. */
async function runPair(
  admin: Client,
  settings: Settings,
  order: readonly Side[],
): Promise<Record<Side, Round[]>> {
  const services: Partial<Record<Side, ServiceProcess>> = {};
  const databases = { a: `pms_ab_a_${process.pid}`, b: `pms_ab_b_${process.pid}` };
  try {
    for (const side of order) {
      await admin.query(`CREATE DATABASE ${databases[side]}`);
      services[side] = await startService(side, settings, databases[side]);
      await seed(services[side].url);
    }
    await admin.query('VACUUM ANALYZE');
    const next = {
      a: chatRequests({ stream: settings.stream, skipExtraction: !settings.learns.a, oneUser: false }),
      b: chatRequests({ stream: settings.stream, skipExtraction: !settings.learns.b, oneUser: false }),
    };
    for (const side of order) {
      await runLoad(services[side]!.url, 'warm-up', {
        requests: 2000,
        concurrency: 32,
        next: next[side],
        firstChunk: settings.stream,
      });
    }
    const results: Record<Side, Round[]> = { a: [], b: [] };
    for (let r = 0; r < settings.rounds; r++) {
      for (const side of r % 2 === 0 ? order : [...order].reverse()) {
        const service = services[side]!;
        const since = await databaseNow(admin);
        const before = { node: processCpuMs(service.pid), postgres: postgresCpuMs(databases[side]) };
        const load = await runLoad(service.url, side, {
          requests: settings.requests,
          concurrency: settings.connections,
          next: next[side],
          firstChunk: settings.stream,
        });
        // the work the round left (turns to store, extraction) is counted in its CPU, and cannot run
        // into the other build's round
        await waitForQuiet(service.url);
        results[side].push({
          throughput: load.throughput,
          p50Ms: load.p50Ms,
          p99Ms: load.p99Ms,
          nodeCpuMs: round3((processCpuMs(service.pid) - before.node) / load.requests),
          postgresCpuMs: round3((postgresCpuMs(databases[side]) - before.postgres) / load.requests),
          turnWritesPerChat: round3((await turnWrites(settings, databases[side], since)) / load.requests),
          errors: load.errors,
        });
      }
    }
    return results;
  } finally {
    for (const service of Object.values(services)) await service.stop();
    for (const database of Object.values(databases)) {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  }
}

async function databaseNow(admin: Client): Promise<string> {
  const { rows } = await admin.query<{ now: string }>('SELECT clock_timestamp()::text AS now');
  return rows[0].now;
}

/** The statements that stored turns since `since`: each commits its rows under one transaction id. */
async function turnWrites(settings: Settings, database: string, since: string): Promise<number> {
  const client = new Client({ connectionString: `${settings.adminUrl.replace(/\/[^/]*$/, '')}/${database}` });
  await client.connect();
  try {
    const { rows } = await client.query<{ writes: number }>(
      'SELECT count(DISTINCT xmin::text)::int AS writes FROM messages WHERE created_at >= $1',
      [since],
    );
    return rows[0].writes;
  } finally {
    await client.end();
  }
}

/** A on this build; B as AB_B_MAIN, AB_B_NODE_ARGS and AB_B_ENV say. */
async function startService(side: Side, settings: Settings, database: string): Promise<ServiceProcess> {
  const env = {
    DATABASE_URL: `${settings.adminUrl.replace(/\/[^/]*$/, '')}/${database}`,
    UPSTREAM_BASE_URL: settings.upstreamUrl,
    UPSTREAM_API_KEY: 'bench',
    EXTRACTOR: 'heuristic',
    RATE_LIMIT_PER_MINUTE: '0',
    INGEST_RATE_LIMIT_PER_MINUTE: '0',
    ...envList(side === 'b' ? process.env.AB_B_ENV : process.env.AB_A_ENV),
  };
  const main = (side === 'b' ? process.env.AB_B_MAIN : undefined) ?? THIS_BUILD_MAIN;
  const nodeArgs = side === 'b' ? (process.env.AB_B_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
  return ServiceProcess.start(env, nodeArgs, { stdoutFile: join(settings.logDir, `${side}.log`), main });
}

function summary(list: Round[]) {
  return {
    throughput: median(list.map((x) => x.throughput)),
    p50Ms: median(list.map((x) => x.p50Ms)),
    p99Ms: median(list.map((x) => x.p99Ms)),
    nodeCpuMs: median(list.map((x) => x.nodeCpuMs)),
    postgresCpuMs: median(list.map((x) => x.postgresCpuMs)),
    turnWritesPerChat: median(list.map((x) => x.turnWritesPerChat)),
    errors: list.reduce((sum, x) => sum + x.errors, 0),
  };
}

/** `NAME=value` pairs, space separated (AB_A_ENV, AB_B_ENV). */
function envList(list: string | undefined): Record<string, string> {
  const pairs = (list ?? '').split(' ').filter((pair) => pair.indexOf('=') > 0);
  return Object.fromEntries(
    pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

function median(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
