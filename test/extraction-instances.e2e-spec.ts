// @database postgres
import { ExtractionQueue } from '../src/extraction/extraction-queue';
import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { startSlowLlm } from './support/fake-llm';
import { startTestApp, TestApp } from './support/test-app';

const PROFILES = 12;

// Two processes cannot share an embedded database (its data directory is locked to one process), so
// this needs a PostgreSQL server: `DATABASE_URL=postgres://... npm run test:e2e`.

describe('two app instances on one PostgreSQL server', () => {
  let llm: Awaited<ReturnType<typeof startSlowLlm>>;
  let apps: TestApp[] = [];

  beforeEach(async () => {
    // Every call answers a memory of its own, so a batch applied twice would show as two memories.
    llm = await startSlowLlm(50, (n) => ({
      memories: [{ content: `The user said something (call ${n}).`, type: 'fact', importance: 0.5 }],
    }));
  });

  afterEach(async () => {
    for (const app of apps) await app.close();
    apps = [];
    await llm.close();
  });

  async function startInstances(extraEnv: Record<string, string> = {}): Promise<TestApp[]> {
    const env = {
      EXTRACTOR: 'llm',
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: 'sk-llm',
      EXTRACTION_SWEEP_INTERVAL_MS: '0',
      EXTRACTION_CONCURRENCY: '4',
      ...extraEnv,
    };
    apps = [await startTestApp(env), await startTestApp(env)];
    return apps;
  }

  async function pendingConversations(t: TestApp): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < PROFILES; i++) {
      const [profile] = await t.dataSource.query(
        `INSERT INTO profiles (external_id, summary, summary_is_manual) VALUES ($1, 'By hand.', true) RETURNING id`,
        [`instances-${i}`],
      );
      await t.dataSource.query(
        `INSERT INTO messages (profile_id, role, content) VALUES ($1, 'user', 'Hello there.'), ($1, 'assistant', 'Hi!')`,
        [profile.id],
      );
      ids.push(profile.id as string);
    }
    return ids;
  }

  async function expectEachExtractedOnce(t: TestApp, profileIds: string[]): Promise<void> {
    for (const id of profileIds) {
      const memories = await t.dataSource.query(
        `SELECT source_message_ids FROM memories WHERE profile_id = $1`,
        [id],
      );
      expect(memories).toHaveLength(1);
      expect(memories[0].source_message_ids).toHaveLength(1);
      const messages = await t.dataSource.query(
        `SELECT extracted_at, extraction_attempts FROM messages WHERE profile_id = $1`,
        [id],
      );
      expect(messages.every((m: { extracted_at: Date | null }) => m.extracted_at !== null)).toBe(true);
      expect(messages.every((m: { extraction_attempts: number }) => m.extraction_attempts === 0)).toBe(true);
    }
  }

  it('extracts every conversation once, calling the LLM once per conversation (leases)', async () => {
    const [a, b] = await startInstances();
    const profileIds = await pendingConversations(a);
    await Promise.all([a.app.get(ExtractionWorker).sweep(), b.app.get(ExtractionWorker).sweep()]);
    await Promise.all([a.drain(), b.drain()]);
    await expectEachExtractedOnce(a, profileIds);
    expect(llm.requests).toHaveLength(PROFILES);
  });

  it('lets one claim of a batch win when many race for it from both instances', async () => {
    const [a, b] = await startInstances({ DATABASE_POOL_SIZE: '16' });
    const profileIds = await pendingConversations(a);
    const queues = [a.app.get(ExtractionQueue), b.app.get(ExtractionQueue)];
    // A claim whose statement read before a rival committed its claim, and locked the profile after,
    // must not take the batch too. The window is narrow, so the race is run many times.
    for (let round = 0; round < 60; round++) {
      await a.dataSource.query(`UPDATE messages SET claimed_until = NULL, claim_token = NULL`);
      await Promise.all(
        profileIds.map(async (profileId) => {
          const claims = await Promise.all(
            Array.from({ length: 8 }, (_, i) => queues[i % 2].claimNextBatch(profileId, 30_000)),
          );
          expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
        }),
      );
      const [row] = await a.dataSource.query(
        `SELECT count(DISTINCT claim_token)::int AS tokens FROM messages WHERE claim_token IS NOT NULL`,
      );
      expect(row.tokens).toBe(profileIds.length);
    }
  });

  it('holds no database connection or lock while the LLM answers: requests go on, on a small pool', async () => {
    await llm.close();
    llm = await startSlowLlm(600, () => ({
      memories: [{ content: 'A slow fact.', type: 'fact', importance: 0.5 }],
    }));
    const [a, b] = await startInstances({ DATABASE_POOL_SIZE: '2', EXTRACTION_CONCURRENCY: '1' });
    const profileIds = await pendingConversations(a);
    const sweeps = Promise.all([a.app.get(ExtractionWorker).sweep(), b.app.get(ExtractionWorker).sweep()]);
    await waitUntil(() => llm.requests.length >= 2);
    const [locks] = await a.dataSource.query(
      // this database's: other test workers run on the same server
      `SELECT count(*)::int AS advisory FROM pg_locks
       WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(locks.advisory).toBe(0);
    const [held] = await a.dataSource.query(
      `SELECT count(*)::int AS count FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'profile-memory-service'
         AND state LIKE 'idle in transaction%'`,
    );
    expect(held.count).toBe(0);
    for (const app of [a, b]) {
      const started = Date.now();
      await app.api().get('/api/profiles').expect(200);
      await app.api().get('/ready').expect(200);
      expect(Date.now() - started).toBeLessThan(1_000);
    }
    await sweeps;
    await Promise.all([a.drain(), b.drain()]);
    await expectEachExtractedOnce(a, profileIds);
  });

  it('takes over the batch of a process that died holding it, once its lease ran out', async () => {
    const [a, b] = await startInstances();
    const [profileId] = await pendingConversations(a);
    // A process claims the batch and dies: nothing completes or releases it.
    const dead = await a.app.get(ExtractionQueue).claimNextBatch(profileId, 3_000);
    expect(dead).not.toBeNull();
    const memoriesOf = async () =>
      (
        await a.dataSource.query(`SELECT count(*)::int AS count FROM memories WHERE profile_id = $1`, [
          profileId,
        ])
      )[0].count as number;
    await b.app.get(ExtractionWorker).sweep();
    await b.drain();
    expect(llm.requests).toHaveLength(PROFILES - 1); // every profile but the claimed one
    expect(await memoriesOf()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    await b.app.get(ExtractionWorker).sweep();
    await b.drain();
    expect(llm.requests).toHaveLength(PROFILES);
    expect(await memoriesOf()).toBe(1);
    // The dead process's late apply finds the batch is no longer its own.
    const late = await a.dataSource.transaction((manager) =>
      a.app.get(ExtractionQueue).complete(manager, dead!),
    );
    expect(late).toBe(false);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
