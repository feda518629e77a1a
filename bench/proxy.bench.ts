import { LoadResult, round, runLoad } from './load';

const CONCURRENCY = 32;
const USERS = 100;

export interface ProxyOverhead {
  mode: string;
  direct: LoadResult;
  proxied: LoadResult;
  addedP50Ms: number;
  addedP99Ms: number;
  throughputRatio: number;
}

/**
 * The proxy's added latency: the same request to the fake upstream directly and through the proxy,
 * alternated in rounds in one process, at 32 concurrent connections. The proxied request does the
 * full work: profile lookup, context (traits and ranked memories), relay, recording afterwards and
 * background extraction of the turn; a third variant skips extraction (service.skipExtraction) to show
 * what the learning costs the same process.
 */
export async function benchProxyOverhead(
  serviceUrl: string,
  upstreamUrl: string,
  scale: number,
): Promise<ProxyOverhead[]> {
  await seedProfiles(serviceUrl);
  const requests = Math.max(500, Math.round(3000 * scale));
  const rounds = 3;
  const results: ProxyOverhead[] = [];
  const variants = [
    { mode: 'non-stream', stream: false, skipExtraction: false },
    { mode: 'stream (time to first chunk)', stream: true, skipExtraction: false },
    { mode: 'non-stream, service.skipExtraction', stream: false, skipExtraction: true },
  ];
  for (const { mode, stream, skipExtraction } of variants) {
    const body = (i: number) => ({
      model: 'bench-model',
      stream,
      ...(skipExtraction ? { service: { skipExtraction: true } } : {}),
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: `What should I cook tonight, given what you know about me? (${i})` },
      ],
    });
    const direct: LoadResult[] = [];
    const proxied: LoadResult[] = [];
    // Warm both paths (connections, JIT, plan caches) before measuring.
    await runLoad(upstreamUrl.replace(/\/v1$/, ''), 'warm-up', {
      requests: 200,
      concurrency: CONCURRENCY,
      next: (i) => ({ method: 'POST', path: '/v1/chat/completions', body: body(i) }),
    });
    await runLoad(serviceUrl, 'warm-up', {
      requests: 300,
      concurrency: CONCURRENCY,
      next: (i) => ({
        method: 'POST',
        path: '/v1/chat/completions',
        body: body(i),
        headers: { 'x-service-id': `bench-user-${i % USERS}` },
      }),
    });
    for (let round = 0; round < rounds; round++) {
      direct.push(
        await runLoad(upstreamUrl.replace(/\/v1$/, ''), 'direct', {
          requests,
          concurrency: CONCURRENCY,
          firstChunk: stream,
          next: (i) => ({ method: 'POST', path: '/v1/chat/completions', body: body(i) }),
        }),
      );
      proxied.push(
        await runLoad(serviceUrl, 'proxied', {
          requests,
          concurrency: CONCURRENCY,
          firstChunk: stream,
          next: (i) => ({
            method: 'POST',
            path: '/v1/chat/completions',
            body: body(i),
            headers: { 'x-service-id': `bench-user-${i % USERS}` },
          }),
        }),
      );
    }
    const d = median(direct);
    const p = median(proxied);
    results.push({
      mode,
      direct: d,
      proxied: p,
      addedP50Ms: round(p.p50Ms - d.p50Ms),
      addedP99Ms: round(p.p99Ms - d.p99Ms),
      throughputRatio: round(p.throughput / d.throughput),
    });
  }
  return results;
}

/** 100 users, each with two traits and 30 memories, so that injection has something to rank. */
async function seedProfiles(serviceUrl: string): Promise<void> {
  const post = (path: string, body: unknown, method = 'POST') =>
    fetch(`${serviceUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const topics = [
    'cooking pasta',
    'vegetarian diet',
    'running',
    'jazz',
    'gardening',
    'travel to Japan',
    'chess',
    'spicy food',
  ];
  for (let u = 0; u < USERS; u++) {
    const id = `bench-user-${u}`;
    await post('/api/profiles', { externalId: id });
    await post(`/api/profiles/${id}/traits/preferred_language`, { value: 'English' }, 'PUT');
    await post(
      `/api/profiles/${id}/traits/interests`,
      { value: [topics[u % topics.length], topics[(u + 3) % topics.length]] },
      'PUT',
    );
    for (let m = 0; m < 30; m++) {
      await post(`/api/profiles/${id}/memories`, {
        content: `Memory ${m}: likes ${topics[(u + m) % topics.length]} (${u}-${m})`,
        type: 'preference',
        importance: (m % 10) / 10,
      });
    }
  }
}

/** The round with the median p50 (rounds differ by noise; the median resists an outlier round). */
function median(results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.p50Ms - b.p50Ms)[Math.floor(results.length / 2)];
}
