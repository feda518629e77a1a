import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startBenchUpstream } from './fake-upstream';
import { runLoad } from './load';
import { postgresCpuMs, processCpuMs } from './process-cpu';
import { ServiceProcess } from './service-process';
import { chatRequests, seed, waitForQuiet } from './throughput.bench';

interface Round {
  throughput: number;
  /** Latency at the client: to the first chunk with AB_STREAM=1, else to the whole answer. */
  p50Ms: number;
  p99Ms: number;
  nodeCpuMs: number;
  postgresCpuMs: number;
  errors: number;
}

/**
 * `node dist/bench/ab-chat.js`: two builds of the service side by side on the PostgreSQL server, each on
 * a database of its own seeded as the throughput suite seeds it, under the same chat load (32
 * connections, 100 users, `skipExtraction` unless AB_LEARN=1, or for B only with AB_LEARN=b (the suite's
 * turns, one in ten telling a fact), streamed with AB_STREAM=1) in rounds that alternate A and B, so that
 * both see the same machine. A is this build; B is AB_B_MAIN (another build's main.js), AB_B_NODE_ARGS
 * (e.g. `--max-semi-space-size=32`) and/or AB_B_ENV (e.g. `DATABASE_CONTEXT_POOL_SIZE=4`, space
 * separated), all at LOG_LEVEL=warn unless AB_B_ENV says otherwise (the log lines go to a file, as a
 * collector would take them). AB_ROUNDS (default 6), AB_REQUESTS (default 4000) and AB_CONNECTIONS
 * (default 32; 1 for one request at a time) size the run. Prints and saves (bench/results/<time>-ab.json) the rounds and their medians: a change
 * worth a few percent shows here where the full suite's run-to-run spread hides it.
 */
async function main(): Promise<void> {
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const rounds = Number(process.env.AB_ROUNDS ?? '6');
  const requests = Number(process.env.AB_REQUESTS ?? '4000');
  const learns = { a: process.env.AB_LEARN === '1', b: ['1', 'b'].includes(process.env.AB_LEARN ?? '') };
  const stream = process.env.AB_STREAM === '1';
  const connections = Number(process.env.AB_CONNECTIONS ?? '32');
  const logDir = mkdtempSync(join(tmpdir(), 'pms-ab-logs-'));
  const upstream = await startBenchUpstream();
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  const services: Record<'a' | 'b', ServiceProcess> = {} as Record<'a' | 'b', ServiceProcess>;
  const databases = { a: `pms_ab_a_${process.pid}`, b: `pms_ab_b_${process.pid}` };
  try {
    for (const name of ['a', 'b'] as const) {
      await admin.query(`CREATE DATABASE ${databases[name]}`);
      const env = {
        DATABASE_URL: `${adminUrl.replace(/\/[^/]*$/, '')}/${databases[name]}`,
        UPSTREAM_BASE_URL: upstream.url,
        UPSTREAM_API_KEY: 'bench',
        EXTRACTOR: 'heuristic',
        RATE_LIMIT_PER_MINUTE: '0',
        INGEST_RATE_LIMIT_PER_MINUTE: '0',
        ...(name === 'b' ? bEnv() : {}),
      };
      const other = name === 'b' ? process.env.AB_B_MAIN : undefined;
      const saved = process.env.BENCH_SERVICE_MAIN;
      if (other) process.env.BENCH_SERVICE_MAIN = other;
      else delete process.env.BENCH_SERVICE_MAIN;
      const nodeArgs = name === 'b' ? (process.env.AB_B_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
      services[name] = await ServiceProcess.start(env, nodeArgs, { stdoutFile: join(logDir, `${name}.log`) });
      if (saved === undefined) delete process.env.BENCH_SERVICE_MAIN;
      else process.env.BENCH_SERVICE_MAIN = saved;
      await seed(services[name].url);
    }
    await admin.query('VACUUM ANALYZE');
    const next = {
      a: chatRequests({ stream, skipExtraction: !learns.a, oneUser: false }),
      b: chatRequests({ stream, skipExtraction: !learns.b, oneUser: false }),
    };
    for (const name of ['a', 'b'] as const) {
      await runLoad(services[name].url, 'warm-up', {
        requests: 2000,
        concurrency: 32,
        next: next[name],
        firstChunk: stream,
      });
    }
    const results: Record<'a' | 'b', Round[]> = { a: [], b: [] };
    for (let r = 0; r < rounds; r++) {
      for (const name of r % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
        const service = services[name];
        const before = { node: processCpuMs(service.pid), postgres: postgresCpuMs() };
        const load = await runLoad(service.url, name, {
          requests,
          concurrency: connections,
          next: next[name],
          firstChunk: stream,
        });
        // the work the round left (turns to store, extraction) is counted in its CPU, and cannot run
        // into the other build's round
        await waitForQuiet(service.url);
        results[name].push({
          throughput: load.throughput,
          p50Ms: load.p50Ms,
          p99Ms: load.p99Ms,
          nodeCpuMs: round3((processCpuMs(service.pid) - before.node) / load.requests),
          postgresCpuMs: round3((postgresCpuMs() - before.postgres) / load.requests),
          errors: load.errors,
        });
      }
    }
    const summary = (list: Round[]) => ({
      throughput: median(list.map((x) => x.throughput)),
      p50Ms: median(list.map((x) => x.p50Ms)),
      p99Ms: median(list.map((x) => x.p99Ms)),
      nodeCpuMs: median(list.map((x) => x.nodeCpuMs)),
      postgresCpuMs: median(list.map((x) => x.postgresCpuMs)),
      errors: list.reduce((sum, x) => sum + x.errors, 0),
    });
    const report = {
      date: new Date().toISOString(),
      b: { main: process.env.AB_B_MAIN ?? null, nodeArgs: process.env.AB_B_NODE_ARGS ?? null, env: bEnv() },
      learns,
      stream,
      connections,
      requests,
      rounds: results,
      median: { a: summary(results.a), b: summary(results.b) },
    };
    for (const name of ['a', 'b'] as const) {
      const m = report.median[name];
      console.log(
        `${name}: ${results[name].map((x) => Math.round(x.throughput)).join(' ')} req/s; median ${m.throughput} req/s ` +
          `(p50 / p99 ${m.p50Ms} / ${m.p99Ms} ms${stream ? ' to the first chunk' : ''}), ` +
          `CPU ms per chat ${m.nodeCpuMs} Node + ${m.postgresCpuMs} PostgreSQL, ${m.errors} errors`,
      );
    }
    const file = join(
      __dirname,
      '..',
      '..',
      'bench',
      'results',
      `${report.date.replace(/:/g, '-').slice(0, 19)}-ab.json`,
    );
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`saved ${file}`);
  } finally {
    for (const service of Object.values(services)) await service.stop();
    rmSync(logDir, { recursive: true, force: true });
    await upstream.close();
    for (const database of Object.values(databases)) {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
    await admin.end();
  }
}

function bEnv(): Record<string, string> {
  const pairs = (process.env.AB_B_ENV ?? '').split(' ').filter((pair) => pair.indexOf('=') > 0);
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
