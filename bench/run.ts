import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { LoadResult } from './load';
import { startBenchUpstream } from './fake-upstream';
import { benchContextScale, ContextScaleRow } from './context-scale.bench';
import { benchExtraction } from './extraction.bench';
import { benchIngest } from './ingest.bench';
import { benchLocomoRecall, LOCOMO_PATH, locomoAvailable, RecallReport } from './locomo.bench';
import { benchManagement } from './management.bench';
import { benchProxyOverhead, ProxyOverhead } from './proxy.bench';
import { ServiceProcess } from './service-process';

/**
 * `npm run bench`: every benchmark on the embedded database and on a PostgreSQL server, printed and kept
 * in bench/results/. BENCH_SCALE (default 1) scales the request counts; BENCH_TARGETS=embedded,postgres
 * picks the databases; BENCH_PG_ADMIN_URL names the server (a fresh database is created on it).
 */
async function main(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? '1');
  const targets = (process.env.BENCH_TARGETS ?? 'embedded,postgres').split(',').map((t) => t.trim());
  const adminUrl = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const results: Record<
    string,
    {
      management: LoadResult[];
      proxy: ProxyOverhead[];
      ingest?: LoadResult[];
      extraction?: LoadResult[];
      contextScale?: ContextScaleRow[];
      locomo?: { ranked: RecallReport; baseline: RecallReport };
    }
  > = {};
  const report = {
    date: new Date().toISOString(),
    command: 'npm run bench',
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
    try {
      const service = await ServiceProcess.start(serviceEnv);
      try {
        const management = await benchManagement(service.url, scale);
        printTable(management);
        const proxy = await benchProxyOverhead(service.url, upstream.url, scale);
        printProxyTable(proxy);
        const ingest = await benchIngest(service.url, scale);
        printTable(ingest);
        results[label] = { management, proxy, ingest };
        if (locomoAvailable()) {
          const ranked = await benchLocomoRecall(service.url, 'ranked');
          await service.stop();
          // The baseline: the same path with relevance switched off (importance and recency only).
          const baselineService = await ServiceProcess.start({ ...serviceEnv, RANK_WEIGHT_RELEVANCE: '0' });
          const baseline = await benchLocomoRecall(baselineService.url, 'baseline');
          await baselineService.stop();
          printLocomoTable(ranked, baseline);
          results[label].locomo = { ranked, baseline };
        } else {
          console.log(`LoCoMo data not found at ${LOCOMO_PATH}: retrieval quality not measured`);
        }
      } finally {
        await service.stop();
      }
      // Starts services of its own (the extraction LLM's address is part of their environment).
      const extraction = await benchExtraction(serviceEnv, scale);
      printTable(extraction);
      results[label].extraction = extraction;
      const contextScale = await benchContextScale(serviceEnv, scale);
      printContextScaleTable(contextScale);
      results[label].contextScale = contextScale;
    } finally {
      await upstream.close();
      await cleanup();
    }
  }

  const resultsDir = join(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${report.date.slice(0, 19).replace(/:/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nmachine: ${JSON.stringify(report.machine)}\nsaved ${file}`);
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

function printContextScaleTable(rows: ContextScaleRow[]): void {
  console.log(
    '\n| chat request (context build), one at a time | req/s | p50 ms | p99 ms | service RSS MiB (growth) |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.memories} memories in the profile | ${r.throughput} | ${r.p50Ms} | ${r.p99Ms} | ${r.rssMiB} (+${r.rssGrowthMiB}) |`,
    );
  }
}

function printLocomoTable(ranked: RecallReport, baseline: RecallReport): void {
  console.log(
    `\n| LoCoMo recall@<=10 (${ranked.questions} questions, ${ranked.memoriesStored} memories) | ranked | baseline (importance + recency) |`,
  );
  console.log('|---|---:|---:|');
  console.log(`| overall | ${ranked.recall} | ${baseline.recall} |`);
  for (const category of Object.keys(ranked.byCategory)) {
    const r = ranked.byCategory[category];
    console.log(`| ${category} (${r.questions}) | ${r.recall} | ${baseline.byCategory[category].recall} |`);
  }
  console.log(`| mean memories injected | ${ranked.meanInjected} | ${baseline.meanInjected} |`);
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
