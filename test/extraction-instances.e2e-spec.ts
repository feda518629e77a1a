import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { startSlowLlm } from './support/fake-llm';
import { startTestApp, TestApp } from './support/test-app';

const PROFILES = 12;

// Two processes cannot share an embedded database (its data directory is locked to one process), so
// this needs a PostgreSQL server: `DATABASE_URL=postgres://... npm run test:e2e`.
const onServer = process.env.DATABASE_URL !== undefined;
const describeOnServer = onServer ? describe : describe.skip;

describeOnServer('two app instances on one PostgreSQL server (skipped without DATABASE_URL)', () => {
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
      LOG_LEVEL: 'error',
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

  it('extracts every conversation once, calling the LLM once per conversation (advisory lock)', async () => {
    const [a, b] = await startInstances();
    const profileIds = await pendingConversations(a);
    await Promise.all([a.app.get(ExtractionWorker).sweep(), b.app.get(ExtractionWorker).sweep()]);
    await Promise.all([a.drain(), b.drain()]);
    await expectEachExtractedOnce(a, profileIds);
    expect(llm.requests).toHaveLength(PROFILES);
  });

  it('still applies each batch once when the instances cannot hold the lock (pool of one)', async () => {
    const [a, b] = await startInstances({ DATABASE_POOL_SIZE: '1' });
    const profileIds = await pendingConversations(a);
    await Promise.all([a.app.get(ExtractionWorker).sweep(), b.app.get(ExtractionWorker).sweep()]);
    await Promise.all([a.drain(), b.drain()]);
    await expectEachExtractedOnce(a, profileIds);
    expect(llm.requests.length).toBeGreaterThanOrEqual(PROFILES);
  });
});
