// @database embedded
import { Client, type Pool } from 'pg';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { EMBEDDED_DATABASE } from '../src/database/database.module';
import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { EmbeddedDatabase, IN_MEMORY_DATA_DIR } from '../src/database/embedded-database';
import { EmbeddedPgConnection, embeddedPgOptions } from '../src/database/embedded-pg-connection';
import { makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

/**
 * node-postgres talks to the embedded database through EmbeddedPgConnection: a query's messages reach
 * PGlite's thread in one request, errors come back as node-postgres expects them, and the connection
 * goes on.
 */
describe('The connection to the embedded database', () => {
  const t = useTestApp();
  let calls: number;
  let restore: () => void;

  beforeAll(() => {
    const { thread } = t.app.get<EmbeddedDatabase>(EMBEDDED_DATABASE);
    const execute = thread.execProtocol.bind(thread);
    jest.spyOn(thread, 'execProtocol').mockImplementation((messages) => {
      calls++;
      return execute(messages);
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

  it('keeps the event loop going while a statement runs', async () => {
    // pg_sleep holds PGlite for half a second; on the event loop's thread no timer fires meanwhile
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      await t.dataSource.query('SELECT pg_sleep(0.5)');
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it('stores and reads back a message of megabytes', async () => {
    const profile = await makeProfile(t);
    // an 8 MB message, sent as the turn recording sends its text: as UTF-8 bytes
    const content = Buffer.from('a few words of prose. '.repeat((8 * 1024 * 1024) / 22));
    const [{ id }] = await t.dataSource.query(
      `INSERT INTO messages (profile_id, role, content, request_id, model)
       VALUES ($1, 'user', $2, 'big', 'm') RETURNING id`,
      [profile.id, content],
    );
    const [row] = await t.dataSource.query('SELECT content FROM messages WHERE id = $1', [id]);
    expect(row.content === content.toString('utf8')).toBe(true);
  });
});

/** The thread of the embedded database: what its connection sees when the thread ends or dies. */
describe('The thread of the embedded database', () => {
  let embedded: EmbeddedDatabase;
  let client: Client;

  beforeEach(async () => {
    embedded = await EmbeddedDatabase.open(IN_MEMORY_DATA_DIR);
    client = new Client(embeddedPgOptions(embedded.thread));
    client.on('error', () => undefined); // a lost connection is also reported to the client
    await client.connect();
    await expect(client.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });

  afterEach(async () => {
    await embedded.close();
  });

  it('fails the queries, not hangs them, when the thread dies', async () => {
    const worker = (embedded.thread as unknown as { worker: { terminate(): Promise<number> } }).worker;
    const running = client.query('SELECT pg_sleep(0.2)');
    await worker.terminate();
    await expect(running).rejects.toThrow(/thread exited/);
    const pool = new Client(embeddedPgOptions(embedded.thread));
    pool.on('error', () => undefined);
    await pool.connect();
    await expect(pool.query('SELECT 1')).rejects.toThrow(/thread exited/);
  });

  it('ends the thread when the database closes', async () => {
    await embedded.close();
    expect(embedded.thread.closed).toBe(true);
    const after = new Client(embeddedPgOptions(embedded.thread));
    after.on('error', () => undefined);
    await after.connect();
    await expect(after.query('SELECT 1')).rejects.toThrow(/closed/);
  });
});
