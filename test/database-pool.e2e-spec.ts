import type { QueryRunner } from 'typeorm';
import { expectEnvelope, makeMemory, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';
import { describeOn } from './support/databases';

const onServer = process.env.DATABASE_URL !== undefined;

/** A database pool with no connection to give: requests fail fast in the envelope, never hang. */
describe('A starved database pool', () => {
  const t = useTestApp({
    env: { DATABASE_POOL_SIZE: '2', EXTRACTION_CONCURRENCY: '1', DATABASE_ACQUIRE_TIMEOUT_MS: '500' },
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

/** The context statement's own pool on a server is DATABASE_CONTEXT_POOL_SIZE connections. */
describeOn('postgres', 'The context statement pool', () => {
  const t = useTestApp({ env: { DATABASE_CONTEXT_POOL_SIZE: '1' } });

  it('runs concurrent context statements on no more connections than DATABASE_CONTEXT_POOL_SIZE', async () => {
    const profile = await makeProfile(t);
    await makeMemory(t, profile.id, { content: 'Likes green tea' });
    const contexts = Array.from({ length: 16 }, (_, i) =>
      t
        .api()
        .post(`/api/profiles/${profile.id}/context`)
        .send({ question: `What does the user drink? (${i})` }),
    );
    for (const res of await Promise.all(contexts)) expect(res.status).toBe(200);
    // the backends whose last statement was a context statement, named by how every one begins
    // (pg_stat_activity keeps only the first track_activity_query_size bytes of a statement)
    const [{ backends }] = await t.dataSource.query(
      `SELECT count(*)::int AS backends FROM pg_stat_activity
       WHERE datname = current_database() AND query LIKE 'WITH profile AS (SELECT id, summary, xmin::text AS version %'
         AND pid <> pg_backend_pid()`,
    );
    expect(backends).toBe(1);
  });
});
