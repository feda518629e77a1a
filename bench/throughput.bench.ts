import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { LoadResult, RequestSpec, round, runLoad } from './load';
import { postgresCpuMs, processCpuMs } from './process-cpu';
import { freePort } from './free-port';
import { productionNodeFlags, ServiceProcess } from './service-process';

const CONNECTIONS = 32;
const USERS = 100;
const TRAITS = 10;
const MEMORIES = 50;
const ROUNDS = 3;
const SUSTAINED_ROUNDS = 4;
/** Warm-up rounds (for each target) before each row. */
const WARM_UP_ROUNDS = 3;

/** A load's result with the CPU time it cost per request: the relay's process and the PostgreSQL server's. */
export interface MeasuredLoad extends LoadResult {
  /** CPU from the start of the load until the work it left behind was done. */
  cpuMsPerRequest: { process: number; postgres: number | null };
  /** CPU while the load ran, without the work it left behind. */
  cpuMsPerRequestDuringLoad: { process: number; postgres: number | null };
  /**
   * The service's background work while the load ran (not after): extraction batches it ran, and
   * contexts whose held part it read again from the database (`pms_context_standing_total{result="sent"}`).
   */
  duringLoad?: { extractionBatches: number; contextsSentAgain: number; eventLoopLagMaxMs: number };
}

export interface ThroughputRow {
  scenario: string;
  direct: LoadResult;
  floor: MeasuredLoad;
  service: MeasuredLoad;
  /** Service throughput over the floor relay's, measured in the same rounds. */
  ratioToFloor: number;
  addedP50Ms: number;
  addedP99Ms: number;
}

export interface ThroughputReport {
  rows: ThroughputRow[];
  /** Request lines the service logged during the suite (LOG_LEVEL=info), warm-ups and seeding included. */
  requestLogLines: number;
  /**
   * Learning every turn in rounds back to back, without waiting for the background work between them:
   * the answers while extraction catches up, and the longest the service's event loop was held.
   */
  sustained: { service: MeasuredLoad; eventLoopLagMaxMs: number };
  /**
   * One request at a time: the service's added latency over the upstream alone, and the floor relay's
   * (its tail is the machine's: what any Node relay here adds at p99).
   */
  serial: {
    direct: LoadResult;
    floor: MeasuredLoad;
    service: MeasuredLoad;
    addedP50Ms: number;
    addedP99Ms: number;
    floorAddedP50Ms: number;
    floorAddedP99Ms: number;
    /**
     * Streams one at a time, to the first chunk: what the service adds before a stream's first chunk
     * when it is not queueing behind 31 others (at 32 connections the added time is mostly queueing).
     */
    streamFirstChunk: { direct: LoadResult; service: LoadResult; addedP50Ms: number; addedP99Ms: number };
  };
}

/**
 * Chat throughput of the service next to what the machine allows: the fake upstream alone ("direct"),
 * the floor relay (bench/floor-relay.ts: the least a Node relay that reads the database on each request
 * does) and the service, at 32 connections, each scenario in rounds that alternate the three, with
 * 100 profiles of 10 traits and 50 memories. Scenarios: many users with and without background
 * learning (one turn in ten tells a fact: chatRequests), all connections on one user, and streams (time
 * to first chunk); then learning rounds back to back, and one request at a time (the floor relay too).
 * The service runs at the default log level, so it writes its line per request (to a file).
 */
export async function benchThroughput(
  serviceEnv: Record<string, string | undefined>,
  upstreamUrl: string,
  scale: number,
): Promise<ThroughputReport> {
  const requests = Math.max(1000, Math.round(4000 * scale));
  // at the default log level, writing its line per request to a file as a log collector would read it
  const logDir = mkdtempSync(join(tmpdir(), 'pms-bench-log-'));
  const logFiles: string[] = [];
  const startService = () => {
    logFiles.push(join(logDir, `service-${logFiles.length}.log`));
    return ServiceProcess.start({ ...serviceEnv, LOG_LEVEL: 'info' }, [], { stdoutFile: logFiles.at(-1) });
  };
  let service = await startService();
  const floor = await startFloorRelay(upstreamUrl, serviceEnv.DATABASE_URL);
  const onServer = serviceEnv.DATABASE_URL !== undefined;
  // CPU from the start of the load until the work it left behind (turns to store, extraction) is done
  const measured = async (
    pid: number | undefined,
    load: () => Promise<LoadResult>,
    {
      settled = () => Promise.resolve(),
      serviceUrl,
    }: { settled?: () => Promise<void>; serviceUrl?: string } = {},
  ): Promise<MeasuredLoad> => {
    const activityBefore = serviceUrl ? await backgroundActivity(serviceUrl) : null;
    const before = { process: processCpuMs(pid), postgres: onServer ? postgresCpuMs() : Number.NaN };
    const result = await load();
    const atLoadEnd = { process: processCpuMs(pid), postgres: onServer ? postgresCpuMs() : Number.NaN };
    const activityAfter = serviceUrl ? await backgroundActivity(serviceUrl) : null;
    await settled();
    const perRequest = (ms: number) => (Number.isNaN(ms) ? null : round(ms / result.requests));
    return {
      ...result,
      cpuMsPerRequest: {
        process: perRequest(processCpuMs(pid) - before.process) ?? Number.NaN,
        postgres: perRequest(postgresCpuMs() - before.postgres),
      },
      cpuMsPerRequestDuringLoad: {
        process: perRequest(atLoadEnd.process - before.process) ?? Number.NaN,
        postgres: perRequest(atLoadEnd.postgres - before.postgres),
      },
      ...(activityBefore &&
        activityAfter && {
          duringLoad: {
            extractionBatches: activityAfter.extractionBatches - activityBefore.extractionBatches,
            contextsSentAgain: activityAfter.contextsSentAgain - activityBefore.contextsSentAgain,
            eventLoopLagMaxMs: activityAfter.eventLoopLagMaxMs,
          },
        }),
    };
  };
  const quiet = async () => {
    await waitForQuiet(service.url);
  };
  try {
    await seed(service.url);
    if (onServer) {
      await analyzeServer(serviceEnv.DATABASE_URL!);
    } else {
      // The embedded database's table upkeep (its autovacuum) runs at boot and every minute: a restart
      // analyzes the seeded tables, as the upkeep would have within a minute in production, and the
      // rounds run at the production interval.
      await service.stop();
      service = await startService();
    }
    const upstreamOrigin = upstreamUrl.replace(/\/v1$/, '');
    const chat = chatRequests;
    const withoutService =
      (next: (i: number) => RequestSpec) =>
      (i: number): RequestSpec => {
        const spec = next(i);
        const { service: _service, ...body } = spec.body as Record<string, unknown>;
        return { ...spec, body };
      };

    const scenarios = [
      { scenario: 'many users, service.skipExtraction', stream: false, skipExtraction: true, oneUser: false },
      { scenario: 'many users, learning every turn', stream: false, skipExtraction: false, oneUser: false },
      {
        scenario: 'one user on every connection, learning',
        stream: false,
        skipExtraction: false,
        oneUser: true,
      },
      {
        scenario: 'streams, time to first chunk, skipExtraction',
        stream: true,
        skipExtraction: true,
        oneUser: false,
      },
    ];
    const rows: ThroughputRow[] = [];
    for (const { scenario, ...options } of scenarios) {
      const next = chat(options);
      const plain = withoutService(next);
      const load = (url: string, name: string, spec: (i: number) => RequestSpec, count: number) =>
        runLoad(url, name, {
          requests: count,
          concurrency: CONNECTIONS,
          next: spec,
          firstChunk: options.stream,
        });
      // three rounds' worth of requests for each, before every row: a round is otherwise partly the
      // processes' warm-up (the floor relay's first row ran 15-20 % slower than its next rows on the
      // same requests with no warm-up, and still 5 to 20 % with one round's worth)
      for (let warmUp = 0; warmUp < WARM_UP_ROUNDS; warmUp++) {
        await load(upstreamOrigin, 'warm-up', plain, requests);
        await load(floor.url, 'warm-up', plain, requests);
        await load(service.url, 'warm-up', next, requests);
      }
      await quiet();
      const results = {
        direct: [] as LoadResult[],
        floor: [] as MeasuredLoad[],
        service: [] as MeasuredLoad[],
      };
      for (let r = 0; r < ROUNDS; r++) {
        results.direct.push(await load(upstreamOrigin, 'direct', plain, requests));
        results.floor.push(await measured(floor.pid, () => load(floor.url, 'floor relay', plain, requests)));
        results.service.push(
          await measured(service.pid, () => load(service.url, 'service', next, requests), {
            settled: quiet,
            serviceUrl: service.url,
          }),
        );
      }
      const row = {
        scenario,
        direct: medianRound(results.direct),
        floor: medianRound(results.floor),
        service: medianRound(results.service),
      };
      rows.push({
        ...row,
        ratioToFloor: round(row.service.throughput / row.floor.throughput),
        addedP50Ms: round(row.service.p50Ms - row.direct.p50Ms),
        addedP99Ms: round(row.service.p99Ms - row.direct.p99Ms),
      });
    }

    await quiet();
    const sustainedRounds: MeasuredLoad[] = [];
    const learning = chat({ stream: false, skipExtraction: false, oneUser: false });
    for (let r = 0; r < SUSTAINED_ROUNDS; r++) {
      const round = () =>
        runLoad(service.url, 'service', { requests, concurrency: CONNECTIONS, next: learning });
      sustainedRounds.push(await measured(service.pid, round, { serviceUrl: service.url }));
    }
    await quiet();

    const serialSpec = chat({ stream: false, skipExtraction: true, oneUser: false });
    const serialCount = Math.max(300, Math.round(1500 * scale));
    const serialRounds = {
      direct: [] as LoadResult[],
      floor: [] as MeasuredLoad[],
      service: [] as MeasuredLoad[],
    };
    const serialPlain = { requests: serialCount, concurrency: 1, next: withoutService(serialSpec) };
    const serialStreamSpec = chat({ stream: true, skipExtraction: true, oneUser: false });
    const serialStreams = { direct: [] as LoadResult[], service: [] as LoadResult[] };
    const firstChunks = { requests: serialCount, concurrency: 1, firstChunk: true };
    for (let r = 0; r < ROUNDS; r++) {
      serialRounds.direct.push(await runLoad(upstreamOrigin, 'direct', serialPlain));
      serialRounds.floor.push(
        await measured(floor.pid, () => runLoad(floor.url, 'floor relay', serialPlain)),
      );
      serialRounds.service.push(
        await measured(
          service.pid,
          () => runLoad(service.url, 'service', { requests: serialCount, concurrency: 1, next: serialSpec }),
          { settled: quiet },
        ),
      );
      serialStreams.direct.push(
        await runLoad(upstreamOrigin, 'direct', { ...firstChunks, next: withoutService(serialStreamSpec) }),
      );
      serialStreams.service.push(
        await runLoad(service.url, 'service', { ...firstChunks, next: serialStreamSpec }),
      );
      await quiet();
    }
    const direct = medianRound(serialRounds.direct);
    const streamDirect = medianRound(serialStreams.direct);
    const streamService = medianRound(serialStreams.service);
    const floorSerial = medianRound(serialRounds.floor);
    const served = medianRound(serialRounds.service);
    return {
      rows,
      requestLogLines: logFiles.map(countRequestLines).reduce((sum, lines) => sum + lines, 0),
      sustained: {
        service: medianRound(sustainedRounds),
        eventLoopLagMaxMs: Math.max(...sustainedRounds.map((load) => load.duringLoad!.eventLoopLagMaxMs)),
      },
      serial: {
        direct,
        floor: floorSerial,
        service: served,
        addedP50Ms: round(served.p50Ms - direct.p50Ms),
        addedP99Ms: round(served.p99Ms - direct.p99Ms),
        floorAddedP50Ms: round(floorSerial.p50Ms - direct.p50Ms),
        floorAddedP99Ms: round(floorSerial.p99Ms - direct.p99Ms),
        streamFirstChunk: {
          direct: streamDirect,
          service: streamService,
          addedP50Ms: round(streamService.p50Ms - streamDirect.p50Ms),
          addedP99Ms: round(streamService.p99Ms - streamDirect.p99Ms),
        },
      },
    };
  } finally {
    await floor.stop();
    await service.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

/** The request lines the service wrote: one per request, as at the default level in production. */
function countRequestLines(logFile: string): number {
  return readFileSync(logFile, 'utf8').split('"msg":"request completed"').length - 1;
}

/** Profiles of 10 traits and 50 memories each. */
export async function seed(serviceUrl: string): Promise<void> {
  const call = (path: string, body: unknown, method = 'POST') =>
    fetch(`${serviceUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const topics = [
    'cooking pasta',
    'vegetarian food',
    'running',
    'jazz',
    'gardening',
    'Japan',
    'chess',
    'spicy food',
  ];
  for (let u = 0; u < USERS; u++) {
    const id = `bench-user-${u}`;
    await call('/api/profiles', { externalId: id });
    for (let k = 0; k < TRAITS; k++) {
      await call(`/api/profiles/${id}/traits/bench_trait_${k}`, { value: `value ${k} of ${id}` }, 'PUT');
    }
    for (let m = 0; m < MEMORIES; m++) {
      await call(`/api/profiles/${id}/memories`, {
        content: `Memory ${m}: likes ${topics[(u + m) % topics.length]} (${u}-${m})`,
        type: 'preference',
        importance: (m % 10) / 10,
      });
    }
  }
}

/**
 * The service's counts of extraction batches run and of contexts whose held part was read again, and
 * the longest its event loop was held since the last scrape (prom-client starts that anew on each).
 */
async function backgroundActivity(
  serviceUrl: string,
): Promise<{ extractionBatches: number; contextsSentAgain: number; eventLoopLagMaxMs: number }> {
  const metrics = await (await fetch(`${serviceUrl}/metrics`)).text();
  const sum = (pattern: RegExp) =>
    [...metrics.matchAll(pattern)].reduce((total, match) => total + Number(match[1]), 0);
  return {
    extractionBatches: sum(/^pms_extraction_batches_total\{[^}]*\}\s+(\S+)/gm),
    contextsSentAgain: sum(/^pms_context_standing_total\{result="sent"\}\s+(\S+)/gm),
    eventLoopLagMaxMs: round(sum(/^nodejs_eventloop_lag_max_seconds\s+(\S+)/gm) * 1000),
  };
}

/** Facts users tell about themselves, said again now and then (traits updated, memories reinforced). */
const FACTS = [
  'I live in Lisbon.',
  'I am vegetarian.',
  'I love sailing.',
  'I work as a nurse.',
  'I moved to Porto.',
];

/**
 * The bench's chat turns: a question to a user's profile; with learning, one turn in ten also tells a
 * fact the heuristic extractor learns (every user in turn, from FACTS), the rest there is nothing in.
 */
export function chatRequests(options: {
  stream: boolean;
  skipExtraction: boolean;
  oneUser: boolean;
}): (i: number) => RequestSpec {
  return (i) => {
    const pass = Math.floor(i / USERS);
    const fact = !options.skipExtraction && i % 10 === pass % 10 ? `${FACTS[pass % FACTS.length]} ` : '';
    return {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'x-service-id': `bench-user-${options.oneUser ? 0 : i % USERS}` },
      body: {
        model: 'bench-model',
        stream: options.stream,
        ...(options.skipExtraction ? { service: { skipExtraction: true } } : {}),
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          {
            role: 'user',
            content: `${fact}What should I cook tonight, given what you know about me? (${i})`,
          },
        ],
      },
    };
  };
}

/**
 * Waits until the service has stored the turns and learnt from them, so rounds do not overlap, asking
 * `/metrics` every `pollMs`; returns how many times it asked (each scrape is work of the service's own).
 */
export async function waitForQuiet(serviceUrl: string, pollMs = 200, withinMs = 120_000): Promise<number> {
  const deadline = Date.now() + withinMs;
  let scrapes = 0;
  while (Date.now() < deadline) {
    const metrics = await (await fetch(`${serviceUrl}/metrics`)).text();
    scrapes++;
    const pending = /^pms_background_tasks\s+(\d+)/m.exec(metrics);
    if (!pending || pending[1] === '0') break;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return scrapes;
}

/**
 * Statistics as a running server has them: freshly seeded tables have none until autovacuum analyzes
 * them, and plans made without them are not the ones production runs.
 */
async function analyzeServer(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
    // the seeding's dirty pages written now, not by a checkpoint during the first row's rounds
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

function medianRound<T extends LoadResult>(results: T[]): T {
  return [...results].sort((a, b) => a.throughput - b.throughput)[Math.floor(results.length / 2)];
}

async function startFloorRelay(
  upstreamUrl: string,
  databaseUrl: string | undefined,
): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> }> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    UPSTREAM_URL: upstreamUrl,
    PORT: String(port),
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  const child = spawn(process.execPath, [...productionNodeFlags(), join(__dirname, 'floor-relay.js')], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(url, { method: 'GET' });
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('the floor relay did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
