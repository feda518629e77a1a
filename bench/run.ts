import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { LoadResult } from './load';
import { BenchUpstream, pseudoRandomEmbeddings, startBenchUpstream } from './fake-upstream';
import { trainLsa } from './lsa-embeddings';
import { BENCH_EMBEDDING_DIMENSIONS, benchContextScale, ContextScaleReport } from './context-scale.bench';
import { benchExtraction } from './extraction.bench';
import { benchIngest } from './ingest.bench';
import {
  benchLocomoRecall,
  LOCOMO_PATH,
  locomoAvailable,
  locomoTurnTexts,
  RecallReport,
} from './locomo.bench';
import { benchManagement } from './management.bench';
import { benchConsoleOpen, ConsoleOpenReport } from './console.bench';
import { benchProxyOverhead, ProxyOverhead } from './proxy.bench';
import { benchSoak, SoakReport } from './soak.bench';
import { benchThroughput, MeasuredLoad, ThroughputReport } from './throughput.bench';
import { saveResult } from './results-file';
import { ServiceProcess } from './service-process';
import { benchRankingWeights, printWeightsTable, WeightsReport } from './weights.bench';

/** Size of the stand-in embeddings. */
const LSA_DIMENSIONS = 256;
const SUITES = [
  'management',
  'proxy',
  'throughput',
  'soak',
  'ingest',
  'locomo',
  'weights',
  'extraction',
  'context',
  'console',
];

/**
 * `npm run bench`: every benchmark on the embedded database and on a PostgreSQL server, printed and kept
 * in bench/results/. BENCH_SCALE (default 1) scales the request counts; BENCH_TARGETS=embedded,postgres
 * picks the databases; BENCH_SUITES (default all) picks among management, proxy, ingest, locomo,
 * weights (ranking weights on scenarios where importance and recency matter), extraction, context,
 * console (the browser console opening a profile of 100,000 memories; PostgreSQL only);
 * BENCH_PG_ADMIN_URL names the server (a fresh database is created on it).
 */
async function main(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? '1');
  const targets = (process.env.BENCH_TARGETS ?? 'embedded,postgres').split(',').map((t) => t.trim());
  const suites = new Set((process.env.BENCH_SUITES ?? SUITES.join(',')).split(',').map((s) => s.trim()));
  for (const suite of suites) if (!SUITES.includes(suite)) throw new Error(`unknown bench suite ${suite}`);
  const adminUrl = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const results: Record<
    string,
    {
      management: LoadResult[];
      proxy: ProxyOverhead[];
      throughput?: ThroughputReport;
      soak?: SoakReport;
      ingest?: LoadResult[];
      extraction?: LoadResult[];
      contextScale?: ContextScaleReport;
      locomo?: LocomoResults;
      weights?: WeightsReport;
      consoleOpen?: ConsoleOpenReport;
    }
  > = {};
  const report = {
    date: new Date().toISOString(),
    command: 'npm run bench',
    suites: [...suites],
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    scale,
    targets: results,
  };

  for (const target of targets) {
    const { env, cleanup, label } = await prepareTarget(target, adminUrl);
    console.log(`\n== ${label} ==`);
    const upstream = await startBenchUpstream();
    const serviceEnv = {
      ...env,
      UPSTREAM_BASE_URL: upstream.url,
      UPSTREAM_API_KEY: 'bench',
      EXTRACTOR: 'heuristic',
      // The benchmarks measure the service, not its rate limits.
      RATE_LIMIT_PER_MINUTE: '0',
      INGEST_RATE_LIMIT_PER_MINUTE: '0',
    };
    results[label] = { management: [], proxy: [] };
    const result = results[label];
    try {
      const service = await ServiceProcess.start(serviceEnv);
      try {
        if (suites.has('management'))
          printTable((result.management = await benchManagement(service.url, scale)));
        if (suites.has('proxy'))
          printProxyTable((result.proxy = await benchProxyOverhead(service.url, upstream.url, scale)));
        if (suites.has('ingest')) printTable((result.ingest = await benchIngest(service.url, scale)));
        if (suites.has('console') && env.DATABASE_URL) {
          result.consoleOpen = await benchConsoleOpen(service.url, env.DATABASE_URL);
          console.log(
            `console, profile of ${result.consoleOpen.memories} memories: ${JSON.stringify(result.consoleOpen)}`,
          );
        }
      } finally {
        await service.stop();
      }
      // Starts the service and the floor relay in processes of their own.
      if (suites.has('throughput'))
        printThroughputTable((result.throughput = await benchThroughput(serviceEnv, upstream.url, scale)));
      if (suites.has('soak')) {
        const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? '300');
        result.soak = await benchSoak(serviceEnv, seconds);
        if (result.soak) printSoak(result.soak);
        else console.log('soak: needs a PostgreSQL server (the stored turns are counted in it)');
      }
      if (suites.has('locomo')) result.locomo = await benchLocomo(serviceEnv, upstream);
      // Starts a service per weight combination (the weights are part of its environment).
      if (suites.has('weights'))
        printWeightsTable((result.weights = await benchRankingWeights(serviceEnv, scale)));
      // Starts services of its own (the extraction LLM's address is part of their environment).
      if (suites.has('extraction'))
        printTable((result.extraction = await benchExtraction(serviceEnv, scale)));
      if (suites.has('context')) {
        upstream.serveEmbeddings(pseudoRandomEmbeddings(BENCH_EMBEDDING_DIMENSIONS));
        printContextScaleTable((result.contextScale = await benchContextScale(serviceEnv, scale)));
      }
    } finally {
      await upstream.close();
      await cleanup();
    }
  }

  console.log(`\nmachine: ${JSON.stringify(report.machine)}`);
  saveResult(report);
}

interface LocomoResults {
  ranked: RecallReport;
  baseline: RecallReport;
  /** With semantic ranking on (pgvector, or the cosine in SQL where it is missing). */
  semantic?: RecallReport;
}

/**
 * LoCoMo recall three ways, each on a fresh service: ranked by words (the default), the baseline with
 * relevance switched off (importance and recency only), and with semantic ranking, using a stand-in embeddings model served by the bench upstream (LSA trained on the
 * conversations' turns: no real model can be reached here).
 */
async function benchLocomo(
  serviceEnv: Record<string, string | undefined>,
  upstream: BenchUpstream,
): Promise<LocomoResults | undefined> {
  if (!locomoAvailable()) {
    console.log(`LoCoMo data not found at ${LOCOMO_PATH}: retrieval quality not measured`);
    return undefined;
  }
  const measure = async (tag: string, env: Record<string, string | undefined>) => {
    const service = await ServiceProcess.start({ ...serviceEnv, ...env });
    try {
      return await benchLocomoRecall(service.url, tag);
    } finally {
      await service.stop();
    }
  };
  const ranked = await measure('ranked', {});
  const baseline = await measure('baseline', { RANK_WEIGHT_RELEVANCE: '0' });
  // Semantic ranking works on any database: pgvector where installed, else the cosine in SQL.
  upstream.serveEmbeddings(trainLsa(locomoTurnTexts(), { dimensions: LSA_DIMENSIONS }));
  const semantic = await measure('semantic', {
    EMBEDDINGS_MODEL: 'lsa-stand-in',
    EMBEDDINGS_TIMEOUT_MS: '10000',
  });
  printLocomoTable(ranked, baseline, semantic);
  return { ranked, baseline, semantic };
}

async function prepareTarget(
  target: string,
  adminUrl: string,
): Promise<{ env: Record<string, string | undefined>; cleanup: () => Promise<void>; label: string }> {
  if (target === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'pms-bench-'));
    return {
      label: 'embedded PGlite (DATA_DIR on disk)',
      env: { DATABASE_URL: undefined, DATA_DIR: dataDir },
      cleanup: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
    };
  }
  if (target === 'postgres') {
    const database = `pms_bench_${process.pid}`;
    await admin(adminUrl, `CREATE DATABASE ${database}`);
    const client = new Client({ connectionString: adminUrl });
    await client.connect();
    const [{ server_version: version }] = (await client.query('SHOW server_version')).rows as Array<{
      server_version: string;
    }>;
    await client.end();
    return {
      label: `PostgreSQL ${version} server (127.0.0.1)`,
      env: { DATABASE_URL: `${adminUrl.replace(/\/[^/]*$/, '')}/${database}` },
      cleanup: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
    };
  }
  throw new Error(`unknown bench target ${target}`);
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function printTable(results: LoadResult[]): void {
  console.log('| scenario | requests | conc. | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${r.requests} | ${r.concurrency} | ${r.throughput} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors} |`,
    );
  }
}

function printContextScaleTable(report: ContextScaleReport): void {
  console.log('\n| context statement alone | statements | p50 ms | p95 ms | p99 ms | vector index |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const r of report.statements) {
    const ranking = r.semantic ? `, semantic (${r.semantic})` : r.held ? ', held whole, ranked in Node' : '';
    const index = r.usesVectorIndex === undefined ? '' : r.usesVectorIndex ? 'yes' : 'no';
    console.log(
      `| ${r.memories} memories${ranking} | ${r.statements} | ${r.p50Ms} | ${r.p95Ms} | ${r.p99Ms} | ${index} |`,
    );
  }
  console.log(
    '\n| chat request (context build), one at a time | req/s | p50 ms | p99 ms | service RSS MiB (growth) |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const r of report.requests) {
    console.log(
      `| ${r.memories} memories in the profile${r.semantic ? ', semantic ranking' : ''} | ${r.throughput} | ${r.p50Ms} | ${r.p99Ms} | ${r.rssMiB} (+${r.rssGrowthMiB}) |`,
    );
  }
}

function printLocomoTable(ranked: RecallReport, baseline: RecallReport, semantic?: RecallReport): void {
  const semanticCell = (value: number | undefined) => (semantic ? ` ${value} |` : '');
  console.log(
    `\n| LoCoMo recall@<=10 (${ranked.questions} questions, ${ranked.memoriesStored} memories) | ranked by words | baseline (importance + recency) |${semantic ? ' words + LSA stand-in embeddings |' : ''}`,
  );
  console.log(`|---|---:|---:|${semantic ? '---:|' : ''}`);
  console.log(`| overall | ${ranked.recall} | ${baseline.recall} |${semanticCell(semantic?.recall)}`);
  for (const category of Object.keys(ranked.byCategory)) {
    const r = ranked.byCategory[category];
    console.log(
      `| ${category} (${r.questions}) | ${r.recall} | ${baseline.byCategory[category].recall} |${semanticCell(semantic?.byCategory[category].recall)}`,
    );
  }
  console.log(
    `| mean memories injected | ${ranked.meanInjected} | ${baseline.meanInjected} |${semanticCell(semantic?.meanInjected)}`,
  );
}

function printSoak(soak: SoakReport): void {
  console.log(
    `\nsoak: ${soak.seconds} s, ${soak.connections} connections on one user: ${soak.completedTurns} turns completed ` +
      `(${soak.turnsPerSecond}/s), ${soak.storedTurns} stored, ${soak.cutStreams} streams cut by the client, ` +
      `${soak.failedRequests} failed requests; other users' reads p99 ${soak.otherUsersP99Ms} ms ` +
      `(max ${soak.otherUsersMaxMs}); /ready ${soak.readyWasDown ? 'was 503 at times' : 'stayed 200'}; ` +
      `ready with every turn stored ${soak.recoverySeconds} s after the load`,
  );
}

function printThroughputTable(report: ThroughputReport): void {
  const during = (load: MeasuredLoad) =>
    load.duringLoad ? `${load.duringLoad.extractionBatches}, ${load.duringLoad.contextsSentAgain}` : '';
  const cpuOf = (cpu: MeasuredLoad['cpuMsPerRequest']) =>
    `${cpu.process}${cpu.postgres === null ? '' : ` + ${cpu.postgres}`}`;
  // while the load ran, then (in brackets) until the work it left behind was done
  const cpu = (load: MeasuredLoad) =>
    `${cpuOf(load.cpuMsPerRequestDuringLoad)} (${cpuOf(load.cpuMsPerRequest)})`;
  console.log(
    '\n| chat at 32 connections | direct req/s | floor relay req/s (p50 ms) | service req/s (p50 / p99 ms) | service ÷ floor | added p50 / p99 ms | CPU ms per request during the load (until its work was done), floor / service (relay + PostgreSQL) | during the load: extraction batches, contexts read again |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of report.rows) {
    console.log(
      `| ${r.scenario} | ${r.direct.throughput} | ${r.floor.throughput} (${r.floor.p50Ms}) | ${r.service.throughput} (${r.service.p50Ms} / ${r.service.p99Ms}) | ${r.ratioToFloor} | ${r.addedP50Ms} / ${r.addedP99Ms} | ${cpu(r.floor)} / ${cpu(r.service)} | ${during(r.service)} |`,
    );
  }
  const s = report.serial;
  console.log(
    `| one request at a time | ${s.direct.throughput} (${s.direct.p50Ms} ms) | ${s.floor.throughput} (${s.floor.p50Ms} / ${s.floor.p99Ms}; added ${s.floorAddedP50Ms} / ${s.floorAddedP99Ms}) | ${s.service.throughput} (${s.service.p50Ms} / ${s.service.p99Ms}) | | ${s.addedP50Ms} / ${s.addedP99Ms} | ${cpu(s.floor)} / ${cpu(s.service)} | |`,
  );
  const streams = s.streamFirstChunk;
  console.log(
    `| one stream at a time, time to first chunk | ${streams.direct.throughput} (${streams.direct.p50Ms} ms) | | ${streams.service.throughput} (${streams.service.p50Ms} / ${streams.service.p99Ms}) | | ${streams.addedP50Ms} / ${streams.addedP99Ms} | | |`,
  );
  const sustained = report.sustained;
  console.log(
    `\nlearning every turn, rounds back to back: ${sustained.service.throughput} req/s (p50 / p99 ${sustained.service.p50Ms} / ${sustained.service.p99Ms} ms), event loop held at most ${sustained.eventLoopLagMaxMs} ms; during the load ${during(sustained.service)}`,
  );
}

function printProxyTable(rows: ProxyOverhead[]): void {
  console.log(
    '\n| proxy overhead, 32 connections | direct p50 / p99 ms | proxied p50 / p99 ms | added p50 / p99 ms | throughput ratio |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.mode} | ${r.direct.p50Ms} / ${r.direct.p99Ms} | ${r.proxied.p50Ms} / ${r.proxied.p99Ms} | ${r.addedP50Ms} / ${r.addedP99Ms} | ${r.throughputRatio} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
