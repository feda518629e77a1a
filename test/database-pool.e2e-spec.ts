import type { QueryRunner } from 'typeorm';
import { expectEnvelope } from './support/factories';
import { startTestApp, TestApp } from './support/test-app';

const onServer = process.env.DATABASE_URL !== undefined;

/** A database pool with no connection to give: requests fail fast in the envelope, never hang. */
describe('A starved database pool', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      DATABASE_POOL_SIZE: '2',
      EXTRACTION_CONCURRENCY: '1',
      DATABASE_ACQUIRE_TIMEOUT_MS: '500',
    });
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers 503 database_unavailable within seconds, and serves again once connections are free', async () => {
    // Every connection of the pool is taken (the embedded database has one, a server pool here two).
    const held: QueryRunner[] = [];
    for (let i = 0; i < (onServer ? 2 : 1); i++) {
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      held.push(runner);
    }
    try {
      const started = Date.now();
      const res = await t.api().get('/api/profiles').expect(503);
      expect(Date.now() - started).toBeLessThan(3_000);
      expectEnvelope(res.body, 'database_unavailable');
      expect(JSON.stringify(res.body)).not.toMatch(/timeout exceeded|pg|at \w+ \(/);
      await t.api().get('/ready').expect(503);
    } finally {
      for (const runner of held) await runner.release();
    }
    await t.api().get('/api/profiles').expect(200);
    await t.api().get('/ready').expect(200);
  });
});
