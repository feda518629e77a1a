import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startBenchUpstream } from '../fake-upstream';
import { runLoad } from '../load';
import { ServiceProcess } from '../service-process';
import { chatRequests, seed, waitForQuiet } from '../throughput.bench';

/**
 * `node dist/bench/tools/profile-chat.js`: the service under chat load with --cpu-prof, and where its time
 * went during the load (not its start and the seeding), by function and by package. The profiles, turns
 * and seeding are the throughput suite's. Settings:
 * - DATABASE_URL: the server (a database of the run's own is made there and dropped after), else the
 *   embedded database;
 * - PROFILE_REQUESTS (default 6000): the load; PROFILE_CONCURRENCY (default 32): its connections;
 * - PROFILE_WARM_UP (default 6000): requests of the same kind first, outside the profiled window, so
 *   that it holds the warm service and not its compilation (without them, 6,000 chats ran at 1,121 to
 *   1,190 a second, after them at 2,148);
 * - PROFILE_LOG_LEVEL (default warn): `info` writes the line per request, as the throughput suite runs;
 * - PROFILE_LEARN=1: the turns are learnt from; the background work the load left is then profiled
 *   too, and printed apart;
 * - PROFILE_LEARNT=1: a learning load runs first, unprofiled, so that the profiled one meets profiles
 *   that have learnt (summaries, more traits and memories);
 * - PROFILE_ONE_USER=1: every request on one user's profile (the suite's "one user" row);
 * - PROFILE_STREAM=1: streamed answers; PROFILE_STRACE=<file>: the system calls, counted by strace;
 * - PROFILE_JSON=<file>: the load's time by function (self and inclusive), in µs per request.
 */
async function main(): Promise<void> {
  const upstream = await startBenchUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'pms-prof-'));
  const adminUrl = process.env.DATABASE_URL;
  const database = `pms_prof_${process.pid}`;
  const admin = adminUrl ? new Client({ connectionString: adminUrl }) : null;
  await admin?.connect();
  await admin?.query(`CREATE DATABASE ${database}`);
  const spawnedAt = Date.now();
  const service = await ServiceProcess.start(
    {
      DATABASE_URL: adminUrl?.replace(/\/[^/]*$/, `/${database}`),
      UPSTREAM_BASE_URL: upstream.url,
      UPSTREAM_API_KEY: 'bench',
      EXTRACTOR: 'heuristic',
      RATE_LIMIT_PER_MINUTE: '0',
      DATA_DIR: adminUrl ? undefined : mkdtempSync(join(tmpdir(), 'pms-prof-data-')),
      LOG_LEVEL: process.env.PROFILE_LOG_LEVEL ?? 'warn',
    },
    ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    // the request lines go to a file, as the throughput suite writes them
    { stdoutFile: join(dir, 'service.log') },
  );
  await seed(service.url);
  const skipExtraction = process.env.PROFILE_LEARN !== '1';
  // PROFILE_STRACE=<file>: the system calls of the load, counted by strace.
  const strace = process.env.PROFILE_STRACE
    ? spawn('strace', ['-c', '-f', '-o', process.env.PROFILE_STRACE, '-p', String(service.pid)], {
        stdio: 'ignore',
      })
    : null;
  if (strace) await new Promise((resolve) => setTimeout(resolve, 1000));
  if (process.env.PROFILE_LEARNT === '1') {
    // profiles that have learnt (a summary, traits and memories from the turns) before the profiled load
    await runLoad(service.url, 'learning', {
      requests: Number(process.env.PROFILE_REQUESTS ?? '6000'),
      concurrency: 32,
      next: chatRequests({ stream: false, skipExtraction: false, oneUser: false }),
    });
    await waitForQuiet(service.url);
  }
  const stream = process.env.PROFILE_STREAM === '1';
  const oneUser = process.env.PROFILE_ONE_USER === '1';
  // learnt from by the profiled load only, so that the warm-up does not change the profiles
  await runLoad(service.url, 'warm-up', {
    requests: Number(process.env.PROFILE_WARM_UP ?? '6000'),
    concurrency: Number(process.env.PROFILE_CONCURRENCY ?? '32'),
    next: chatRequests({ stream, skipExtraction: true, oneUser }),
    firstChunk: stream,
  });
  await waitForQuiet(service.url);
  const loadAt = Date.now();
  const result = await runLoad(service.url, 'chat', {
    requests: Number(process.env.PROFILE_REQUESTS ?? '6000'),
    concurrency: Number(process.env.PROFILE_CONCURRENCY ?? '32'),
    next: chatRequests({ stream, skipExtraction, oneUser }),
    firstChunk: stream,
  });
  const loadEndAt = Date.now();
  console.log(JSON.stringify(result));
  // with learning, the profile takes in the background work the load left (turns, extraction)
  if (!skipExtraction) await waitForQuiet(service.url);
  if (strace) {
    strace.kill('SIGINT');
    await new Promise((resolve) => strace.once('exit', resolve));
  }
  await service.stop();
  await upstream.close();
  await admin?.query(`DROP DATABASE ${database} WITH (FORCE)`);
  await admin?.end();
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))!;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  console.log('\n== during the load ==');
  const load = summarise(profile, (loadAt - spawnedAt) * 1000, (loadEndAt - spawnedAt) * 1000);
  if (process.env.PROFILE_JSON) {
    // microseconds per request, by function: two runs' files can be compared function by function
    const perRequest = (map: Map<string, number>) =>
      Object.fromEntries([...map].map(([key, us]) => [key, Math.round((100 * us) / result.requests) / 100]));
    writeFileSync(
      process.env.PROFILE_JSON,
      JSON.stringify(
        { result, self: perRequest(load.byFunction), inclusive: perRequest(load.inclusive) },
        null,
        1,
      ),
    );
  }
  if (!skipExtraction) {
    console.log('\n== after the load: the background work it left ==');
    summarise(profile, (loadEndAt - spawnedAt) * 1000, Number.POSITIVE_INFINITY);
  }
}

interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

/** Where the time went from `fromUs` to `toUs` after the process started (not the start and seeding). */
function summarise(
  profile: CpuProfile,
  fromUs: number,
  toUs: number,
): { byFunction: Map<string, number>; inclusive: Map<string, number> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= fromUs && at < toUs) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, time] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/');
    const key = `${functionName || '(anonymous)'} ${where}:${lineNumber}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + time);
    const pkg = url.includes('node_modules/')
      ? url
          .split('node_modules/')[1]
          .split('/')
          .slice(0, url.split('node_modules/')[1].startsWith('@') ? 2 : 1)
          .join('/')
      : url.includes('/dist/')
        ? 'service'
        : url === ''
          ? `(${functionName})`
          : url.startsWith('node:')
            ? url
            : 'node internals';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + time);
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  console.log('\nself time by package\n' + top(byPackage, 25).join('\n'));
  console.log('\nself time by function\n' + top(byFunction, 40).join('\n'));

  // Inclusive time: a function's own samples and those of everything it called (counted once per stack).
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  for (const [id, time] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + time);
    }
  }
  console.log('\ninclusive time by function\n' + top(inclusive, 60).join('\n'));
  return { byFunction, inclusive };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
