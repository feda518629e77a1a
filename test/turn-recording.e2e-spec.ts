import { Client } from 'pg';
import { ServingLoad } from '../src/common/serving-load';
import { MemoryTouches } from '../src/memories/memory-touches';
import { CompletedTurn, TurnRecorder } from '../src/messages/turn-recorder';
import { makeMemory, makeProfile } from './support/factories';
import { TestApp, useTestApp } from './support/test-app';
import { describeOn } from './support/databases';

/** A completed turn of the profile with this user text (its request id), not to be learnt from. */
function completedTurn(profileId: string, text: string): CompletedTurn {
  return {
    profileId,
    userMessages: [{ text, toLearn: false }],
    reply: 'ok',
    model: 'fake-model',
    requestId: text,
    traitOverrides: [],
  };
}

/**
 * The user texts of each write of the app's TurnRecorder while `during` runs (and the background work it left),
 * in order; `hold` can make a write (numbered from 1) wait before it reaches the database.
 */
async function writesDuring(
  t: TestApp,
  during: (writes: string[][]) => Promise<unknown>,
  hold: (write: number) => Promise<void> = () => Promise.resolve(),
): Promise<string[][]> {
  const recorder = t.app.get(TurnRecorder);
  type Insert = (rows: Array<{ content: string }>) => Promise<unknown>;
  const writer = recorder as unknown as { insert: Insert };
  const insert = writer.insert.bind(recorder);
  const writes: string[][] = [];
  const spy = jest.spyOn(writer, 'insert').mockImplementation(async (rows) => {
    writes.push(rows.map((row) => row.content).filter((content) => content !== 'ok'));
    await hold(writes.length);
    return insert(rows);
  });
  try {
    await during(writes);
    await t.drain();
  } finally {
    spy.mockRestore();
  }
  return writes;
}

/** Turns whose answers end in separate callbacks of one turn of the event loop; resolves once all are stored. */
function endInOneLoopTurn(recorder: TurnRecorder, profileId: string, texts: string[]): Promise<void[]> {
  return Promise.all(
    texts.map(
      (text) =>
        new Promise<void>((resolve) =>
          setImmediate(() => void recorder.store(completedTurn(profileId, text)).then(resolve)),
        ),
    ),
  );
}

/** Recording completed turns: never lost, never waiting on rows other chats hold, bounded in memory. */
describe('Turn recording under load', () => {
  const t = useTestApp({ upstream: 'openai' });

  it('stores every turn of many concurrent chats of one user, streamed or not', async () => {
    const profile = await makeProfile(t, 'busy-user');
    for (let i = 0; i < 12; i++) {
      await makeMemory(t, profile.id, { content: `User fact number ${i} about tea and trains` });
    }
    const chat = (i: number) =>
      t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'busy-user')
        .send({
          model: 'fake-model',
          stream: i % 2 === 0,
          messages: [{ role: 'user', content: `Tell me about tea and trains, question ${i}` }],
        })
        .expect(200);
    const rounds = 4;
    const connections = 16;
    for (let round = 0; round < rounds; round++) {
      await Promise.all(Array.from({ length: connections }, (_, i) => chat(round * connections + i)));
    }
    await t.drain();
    const [{ count }] = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM messages WHERE profile_id = $1 AND role = 'user'`,
      [profile.id],
    );
    expect(count).toBe(rounds * connections);
    const touched = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM memories WHERE profile_id = $1 AND last_accessed_at IS NOT NULL`,
      [profile.id],
    );
    expect(touched[0].count).toBeGreaterThan(0);
  });
  it("sends a memory's touch once a minute: the statement then carries only memories that may be due", async () => {
    const profile = await makeProfile(t, 'touched-user');
    const memory = await makeMemory(t, profile.id, { content: 'I like tea' });
    const touches = t.app.get(MemoryTouches);
    const query = jest.spyOn(t.dataSource, 'query');
    const sent = () =>
      query.mock.calls
        .filter(([sql]) => sql.includes('SET last_accessed_at = now()'))
        .map(([, values]) => values);
    try {
      touches.touch([memory.id]);
      await touches.flush();
      touches.touch([memory.id]); // within the minute: known touched, not sent
      await touches.flush();
      await t.drain();
      expect(sent()).toEqual([[[memory.id], expect.any(Number)]]);
    } finally {
      query.mockRestore();
    }
    const [row] = await t.dataSource.query(`SELECT last_accessed_at FROM memories WHERE id = $1`, [
      memory.id,
    ]);
    expect(row.last_accessed_at).not.toBeNull();
  });

  it('writes the turns that came during a write together in the next one, each settled after its commit', async () => {
    const profile = await makeProfile(t, 'gathered-user');
    const recorder = t.app.get(TurnRecorder);
    const settled: string[] = [];
    const turn = (text: string) =>
      recorder.store(completedTurn(profile.id, text)).then(() => settled.push(text));
    // the first write is held until two more turns came
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writes = await writesDuring(
      t,
      async (writes) => {
        const first = turn('first');
        while (writes.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        const others = [turn('second'), turn('third')];
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(settled).toEqual([]); // the first write has not committed: no answer may end
        release();
        await Promise.all([first, ...others]);
      },
      (write) => (write === 1 ? held : Promise.resolve()),
    );
    expect(writes).toEqual([['first'], ['second', 'third']]);
    expect(settled).toEqual(['first', 'second', 'third']);
  });

  it('writes the turns of answers that end in one turn of the event loop together while others are in flight', async () => {
    const profile = await makeProfile(t, 'together-user');
    const recorder = t.app.get(TurnRecorder);
    const answers = [0, 1, 2].map(() => t.app.get(ServingLoad).begin());
    try {
      const writes = await writesDuring(t, () =>
        endInOneLoopTurn(recorder, profile.id, ['together one', 'together two']),
      );
      expect(writes).toEqual([['together one', 'together two']]);
    } finally {
      answers.forEach((answered) => answered());
    }
  });

  it('writes a turn at once when no other answer is in flight', async () => {
    const profile = await makeProfile(t, 'alone-user');
    const recorder = t.app.get(TurnRecorder);
    const answered = t.app.get(ServingLoad).begin();
    try {
      const writes = await writesDuring(t, () =>
        endInOneLoopTurn(recorder, profile.id, ['alone one', 'alone two']),
      );
      // one answer in flight: its turn does not wait for the other's, which goes in the next write
      expect(writes).toEqual([['alone one'], ['alone two']]);
    } finally {
      answered();
    }
  });

  it('stores a turn whose texts hold NUL characters or lone surrogates, as UTF-8 text can hold them', async () => {
    const profile = await makeProfile(t, 'unpaired-user');
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', 'unpaired-user')
      .send({
        model: 'fake\u0000model',
        messages: [{ role: 'user', content: 'Tea \ud800 or \udc00coffee?\u0000' }],
      })
      .expect(200);
    await t.drain();
    const rows: Array<{ role: string; content: string; model: string }> = await t.dataSource.query(
      `SELECT role, content, model FROM messages WHERE profile_id = $1 ORDER BY role DESC`,
      [profile.id],
    );
    expect(rows).toEqual([
      { role: 'user', content: 'Tea \ufffd or \ufffdcoffee?', model: 'fakemodel' },
      { role: 'assistant', content: expect.any(String), model: 'fakemodel' },
    ]);
  });
});

describe('The bound of the queue of turns to store', () => {
  const t = useTestApp({ env: { TURN_QUEUE_SIZE: '2' } });

  it('keeps the room it gave until its turn comes, so requests woken together cannot pass the bound', async () => {
    const profile = await makeProfile(t, 'bounded-user');
    const recorder = t.app.get(TurnRecorder);
    const turn = (text: string) => completedTurn(profile.id, text);
    await recorder.roomForTurn();
    await recorder.roomForTurn();
    expect(recorder.saturated).toBe(true); // nothing queued yet: the room is kept for the two turns
    let third = false;
    const waiting = recorder.roomForTurn().then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe(false);
    void recorder.queue(turn('one'));
    void recorder.queue(turn('two'));
    await waiting; // woken once the writer stored them
    void recorder.queue(turn('three'));
    await t.drain();
    const [{ count }] = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM messages WHERE profile_id = $1 AND role = 'user'`,
      [profile.id],
    );
    expect(count).toBe(3);
    expect(recorder.saturated).toBe(false);
  });
});

describeOn('postgres', 'Turn recording on a server, with other sessions in the way', () => {
  let other: Client;
  // before the harness's drain: work the test left waiting on this session's locks can then finish
  afterEach(async () => {
    await other.query('ROLLBACK').catch(() => undefined);
  });
  const t = useTestApp({ upstream: 'openai', env: { TURN_QUEUE_SIZE: '2' } });

  beforeAll(async () => {
    other = new Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
  });

  afterAll(async () => {
    await other.end();
  });

  const ask = (userId: string, content = 'Do I like tea?') =>
    t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', userId)
      .send({ model: 'fake-model', messages: [{ role: 'user', content }] });
  const storedUserMessages = async (userId: string): Promise<number> => {
    const rows = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM messages m JOIN profiles p ON p.id = m.profile_id
       WHERE p.external_id = $1 AND m.role = 'user'`,
      [userId],
    );
    return rows[0].count as number;
  };

  it('stores the turn while another transaction holds the injected memory row', async () => {
    const profile = await makeProfile(t, 'locked-memory-user');
    const memory = await makeMemory(t, profile.id, { content: 'User likes tea' });
    await other.query('BEGIN');
    await other.query('SELECT id FROM memories WHERE id = $1 FOR UPDATE', [memory.id]);

    const res = await ask('locked-memory-user').expect(200);
    expect(res.headers['x-service-context']).toBe('traits=0; memories=1');
    await t.drain();
    expect(await storedUserMessages('locked-memory-user')).toBe(1);
    await other.query('ROLLBACK');
  });

  it('retries a turn whose write failed on a lost connection, and stores it', async () => {
    await makeProfile(t, 'retried-user');
    await other.query('BEGIN');
    await other.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');
    const answered = ask('retried-user').then((res) => res.status);
    // the writer now waits for the lock (and the answer for the writer): its connection is cut under it
    await waitFor(async () => {
      // this session is in a transaction, which would keep showing its first snapshot of the activity
      await other.query('SELECT pg_stat_clear_snapshot()');
      const rows = await other.query(
        `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%INSERT INTO messages%'`,
      );
      return rows.rows.length > 0;
    });
    await other.query('ROLLBACK');
    expect(await answered).toBe(200);
    expect(await storedUserMessages('retried-user')).toBe(1); // before the answer ended
  });

  it('holds requests while the queue of turns is full, says so on /ready, and stores them all after', async () => {
    const users = ['queued-1', 'queued-2', 'queued-3', 'queued-4'];
    for (const user of users) await makeProfile(t, user);
    await other.query('BEGIN');
    await other.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');

    const finished: string[] = [];
    const requests = users.map((user) =>
      ask(user)
        .expect(200)
        .then(() => finished.push(user)),
    );
    await waitFor(async () => (await t.api().get('/ready')).status === 503);
    const ready = await t.api().get('/ready').expect(503);
    expect(ready.body.error.turns).toEqual({ status: 'down', queued: 2 });
    expect(finished.length).toBeLessThan(users.length); // at least one request waits for room

    await other.query('ROLLBACK');
    await Promise.all(requests);
    await t.drain();
    for (const user of users) expect(await storedUserMessages(user)).toBe(1);
    await t.api().get('/ready').expect(200);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
