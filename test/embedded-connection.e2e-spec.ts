// @database embedded
import type { Pool } from 'pg';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { EMBEDDED_DATABASE } from '../src/database/database.module';
import { ExtractionWorker } from '../src/extraction/extraction-worker';
import type { EmbeddedDatabase } from '../src/database/embedded-database';
import type { EmbeddedPgConnection } from '../src/database/embedded-pg-connection';
import { makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

/**
 * node-postgres talks to the embedded database through EmbeddedPgConnection: a query's messages reach
 * PGlite in one call, errors come back as node-postgres expects them, and the connection goes on.
 */
describe('The connection to the embedded database', () => {
  const t = useTestApp();
  let calls: number;
  let restore: () => void;

  beforeAll(() => {
    const { pglite } = t.app.get<EmbeddedDatabase>(EMBEDDED_DATABASE);
    const execute = pglite.execProtocolStream.bind(pglite);
    jest.spyOn(pglite, 'execProtocolStream').mockImplementation((...args) => {
      calls++;
      return execute(...args);
    });
    restore = () => jest.restoreAllMocks();
  });

  afterAll(() => {
    restore();
  });

  beforeEach(() => {
    calls = 0;
  });

  it('sends a query with parameters in one call', async () => {
    const profile = await makeProfile(t);
    await t.drain();
    calls = 0;
    const rows = await t.dataSource.query('SELECT id, $2::int + 1 AS next FROM profiles WHERE id = $1', [
      profile.id,
      41,
    ]);
    expect(rows).toEqual([{ id: profile.id, next: 42 }]);
    expect(calls).toBe(1);
  });

  it('reports a failing statement as a database error and keeps working', async () => {
    await expect(t.dataSource.query('SELECT 1 / $1::int AS x', [0])).rejects.toThrow(/division by zero/);
    await expect(t.dataSource.query('SELECT $1::int AS x', [7])).resolves.toEqual([{ x: 7 }]);
  });

  it('rolls a failed transaction back and keeps working', async () => {
    const profile = await makeProfile(t);
    await expect(
      t.dataSource.transaction(async (manager) => {
        await manager.query(`UPDATE profiles SET summary = 'changed' WHERE id = $1`, [profile.id]);
        await manager.query('SELECT 1 / $1::int', [0]);
      }),
    ).rejects.toThrow(/division by zero/);
    const [row] = await t.dataSource.query('SELECT summary FROM profiles WHERE id = $1', [profile.id]);
    expect(row.summary).not.toBe('changed');
  });

  it('prepares the statements of a learnt turn once, by name', async () => {
    const profile = await makeProfile(t, 'embedded-learner');
    await t.dataSource.query(
      `INSERT INTO messages (profile_id, role, content, request_id, model) VALUES ($1, 'user', 'I live in Oslo.', 'r', 'm')`,
      [profile.id],
    );
    await t.app.get(ExtractionWorker).schedule(profile.id);
    const pool = (t.dataSource.driver as PostgresDriver).master as Pool & {
      options: { connection: EmbeddedPgConnection };
    };
    expect(Object.keys(pool.options.connection.parsedStatements)).toEqual(
      expect.arrayContaining(['extraction-claim-read-v2', 'extraction-complete-in-place-v1']),
    );
    const [{ pending }] = await t.dataSource.query(
      `SELECT count(*)::int AS pending FROM messages WHERE profile_id = $1 AND extracted_at IS NULL`,
      [profile.id],
    );
    expect(pending).toBe(0);
  });

  it('gives the event loop turns while a burst of queries runs', async () => {
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const burst = Array.from({ length: 500 }, (_, index) =>
      t.dataSource.query('SELECT $1::int AS n', [index]),
    );
    const ticksAtStart = ticks;
    let rows: Array<Array<{ n: number }>>;
    try {
      rows = await Promise.all(burst);
    } finally {
      // a failed burst must stop the ticking too, or it holds Jest's worker open for good
      ticking = false;
    }
    const ticksDuring = ticks - ticksAtStart;
    expect(rows.map(([row]) => row.n)).toEqual(burst.map((_, index) => index));
    // without turns, the queued queries would all run before the timer could fire once
    expect(ticksDuring).toBeGreaterThan(0);
  });
});
