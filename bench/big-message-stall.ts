import { get } from 'node:http';
import { Client } from 'pg';
import { startBenchUpstream } from './fake-upstream';
import { percentile, round } from './load';
import { saveResult } from './results-file';
import { ServiceProcess } from './service-process';

/**
 * `node dist/bench/big-message-stall.js`: whether chats carrying very large user messages stall the
 * service for everyone. Two senders post chats whose user message is STALL_MESSAGE_MB (default 8) MB
 * of prose, one after the other each, for STALL_SECONDS (default 20) with the heuristic extractor
 * learning from them, while a probe asks `/health` every 20 ms (one at a time, each on a new connection). Prints and saves
 * (bench/results/<time>-stall.json) `/health`'s latency percentiles, how many chats were answered, and
 * the same probe with no sender as the baseline.
 *
 * The service runs on a new database of the PostgreSQL server (BENCH_ADMIN_URL), or on its embedded
 * database with STALL_DATABASE=embedded; BENCH_SERVICE_MAIN runs another build (for a before/after).
 */
async function main(): Promise<void> {
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const embedded = process.env.STALL_DATABASE === 'embedded';
  const seconds = Number(process.env.STALL_SECONDS ?? '20');
  const megabytes = Number(process.env.STALL_MESSAGE_MB ?? '8');
  const database = `pms_stall_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  if (!embedded) {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
  }
  const upstream = await startBenchUpstream();
  let service: ServiceProcess | undefined;
  try {
    const databaseUrl = new URL(adminUrl);
    databaseUrl.pathname = `/${database}`;
    service = await ServiceProcess.start(
      {
        DATABASE_URL: embedded ? undefined : databaseUrl.toString(),
        UPSTREAM_BASE_URL: upstream.url,
        UPSTREAM_API_KEY: 'sk-bench',
        EXTRACTOR: 'heuristic',
        BODY_LIMIT: `${megabytes + 2}mb`,
        RATE_LIMIT_PER_MINUTE: '0',
      },
      (process.env.STALL_NODE_ARGS ?? '').split(' ').filter(Boolean),
    );
    const baseline = await probeHealth(service.url, 3_000, () => false);
    const body = JSON.stringify({
      model: 'bench-model',
      messages: [{ role: 'user', content: bigMessage(megabytes * 1024 * 1024) }],
    });
    const deadline = Date.now() + seconds * 1000;
    const answered = { ok: 0, failed: [] as string[] };
    const sender = async (user: string) => {
      while (Date.now() < deadline) {
        try {
          const res = await fetch(`${service!.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-service-id': user },
            body,
          });
          await res.arrayBuffer();
          if (res.ok) answered.ok++;
          else answered.failed.push(`HTTP ${res.status}`);
        } catch (error) {
          answered.failed.push(String((error as { cause?: unknown }).cause ?? error));
        }
      }
    };
    const senders = Promise.all([sender('stall-a'), sender('stall-b')]);
    const loaded = await probeHealth(service.url, seconds * 1000, () => Date.now() >= deadline);
    await senders;
    const report = {
      date: new Date().toISOString(),
      build: process.env.BENCH_SERVICE_MAIN ?? 'this build',
      database: embedded ? 'embedded' : 'postgres',
      messageMegabytes: megabytes,
      seconds,
      chats: answered,
      healthBaselineMs: baseline,
      healthUnderLoadMs: loaded,
    };
    console.log(JSON.stringify(report, null, 2));
    saveResult(report, 'stall');
  } finally {
    await service?.stop();
    await upstream.close();
    if (!embedded) {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  }
}

/** `/health` asked every 20 ms, one at a time, for `ms` or until `done`: its latency percentiles. */
async function probeHealth(
  url: string,
  ms: number,
  done: () => boolean,
): Promise<{ count: number; p50: number; p90: number; p99: number; max: number }> {
  const latencies: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end && !done()) {
    const started = performance.now();
    await healthOnNewConnection(url);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    p50: round(percentile(latencies, 0.5)),
    p90: round(percentile(latencies, 0.9)),
    p99: round(percentile(latencies, 0.99)),
    max: round(latencies.at(-1) ?? Number.NaN),
  };
}

/**
 * One `GET /health` on a connection of its own: a kept-alive one can be closed by the server at the
 * moment it is reused, which a stalled event loop makes likely.
 */
function healthOnNewConnection(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
  });
}

/** About `bytes` of prose about its writer: sentences the heuristic rules read, among others they skip. */
function bigMessage(bytes: number): string {
  const sentences = [
    'I live in Lisbon and I have two kids.',
    'The weather was mild and the streets were quiet in the morning.',
    'I love hiking in the mountains with my friends.',
    'We talked about the project for a while, then went for lunch.',
    'I am allergic to peanuts, so I read every label.',
    'My sister works as a nurse in Porto.',
    'Here is a long paragraph of notes that go on about many things without saying much at all.',
  ];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const sentence = `${sentences[i % sentences.length]} (${i})`;
    parts.push(sentence);
    size += sentence.length + 1;
  }
  return parts.join(' ');
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
