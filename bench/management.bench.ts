import { LoadResult, runLoad } from './load';

const PROFILES = 200;
const CONCURRENCY = 16;

/** Management API read and write throughput and latency against a running service. */
export async function benchManagement(baseUrl: string, scale: number): Promise<LoadResult[]> {
  const requests = Math.max(200, Math.round(4000 * scale));
  const ids = Array.from({ length: PROFILES }, (_, i) => `bench-user-${i}`);
  const results: LoadResult[] = [];
  const profile = (i: number) => ids[i % PROFILES];

  results.push(
    await runLoad(baseUrl, 'write: POST /api/profiles (create or get)', {
      requests: PROFILES,
      concurrency: CONCURRENCY,
      next: (i) => ({ method: 'POST', path: '/api/profiles', body: { externalId: profile(i) } }),
    }),
  );
  results.push(
    await runLoad(baseUrl, 'write: POST memories', {
      requests,
      concurrency: CONCURRENCY,
      next: (i) => ({
        method: 'POST',
        path: `/api/profiles/${profile(i)}/memories`,
        body: {
          content: `Benchmark memory number ${i} about hiking, cooking and databases`,
          type: 'fact',
          importance: (i % 10) / 10,
        },
      }),
    }),
  );
  results.push(
    await runLoad(baseUrl, 'write: PUT trait', {
      requests,
      concurrency: CONCURRENCY,
      next: (i) => ({
        method: 'PUT',
        path: `/api/profiles/${profile(i)}/traits/interests`,
        body: { value: [`topic ${i % 7}`, 'chess'] },
      }),
    }),
  );
  results.push(
    await runLoad(baseUrl, 'read: GET profile (traits + 10 memories)', {
      requests,
      concurrency: CONCURRENCY,
      next: (i) => ({ method: 'GET', path: `/api/profiles/${profile(i)}` }),
    }),
  );
  results.push(
    await runLoad(baseUrl, 'read: GET memories (top 20)', {
      requests,
      concurrency: CONCURRENCY,
      next: (i) => ({ method: 'GET', path: `/api/profiles/${profile(i)}/memories` }),
    }),
  );
  results.push(
    await runLoad(baseUrl, 'read: GET /api/profiles?search=', {
      requests,
      concurrency: CONCURRENCY,
      next: (i) => ({ method: 'GET', path: `/api/profiles?search=user-${i % 50}&limit=10` }),
    }),
  );
  return results;
}
