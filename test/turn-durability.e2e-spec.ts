// @database postgres
import { Client } from 'pg';
import { ChildService, emptyServerDatabase } from './support/child-service';
import { fakeEnv } from './support/fake-env';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';

const USERS = ['durable-a', 'durable-b', 'durable-c', 'durable-d'];
const CONNECTIONS = 8;
/** Answers received before the commits slow down. */
const ANSWERS_BEFORE_KILL = 200;
/** How long the commits are held before the kill. */
const SLOW_COMMIT_MS = 500;

/**
 * The built service in a child process on the PostgreSQL server, under chat load (streams and whole
 * answers), killed with SIGKILL while its commits are slow, and restarted on the same database: every
 * turn whose complete answer the client received is stored.
 */
describe('answered turns across kill -9', () => {
  let upstream: FakeOpenAI;
  let service: ChildService | undefined;

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    await emptyServerDatabase();
  });

  afterAll(async () => {
    await service?.stop();
    await upstream.close();
  });

  const start = async () => {
    service = await ChildService.start({
      ...fakeEnv({ upstream }),
      LOG_LEVEL: 'error',
    });
    await service.ready();
    return service;
  };

  /** One chat; resolves with its text when the client received the whole 200 answer, else null. */
  const chat = async (url: string, user: string, text: string, stream: boolean): Promise<string | null> => {
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-id': user },
        body: JSON.stringify({
          model: 'fake-model',
          stream,
          messages: [{ role: 'user', content: text }],
          service: { skipExtraction: true },
        }),
      });
      const body = await res.text();
      if (res.status !== 200) return null;
      if (stream) return body.endsWith('data: [DONE]\n\n') ? text : null;
      const answer = JSON.parse(body) as { choices?: Array<{ message?: { content?: string } }> };
      return answer.choices?.[0]?.message?.content === `echo: ${text}` ? text : null;
    } catch {
      return null; // cut by the kill
    }
  };

  it('stores every turn whose complete 200 answer reached the client', async () => {
    const first = await start();
    for (const user of USERS) {
      const res = await fetch(`${first.url}/api/profiles`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ externalId: user }),
      });
      expect(res.status).toBe(201);
    }
    const answered: string[] = [];
    let sent = 0;
    let killed = false;
    const connection = async (index: number) => {
      while (!killed) {
        const n = sent++;
        const text = await chat(first.url, USERS[n % USERS.length], `turn ${n}`, (n + index) % 2 === 0);
        if (text !== null && !killed) answered.push(text);
      }
    };
    const load = Promise.all(Array.from({ length: CONNECTIONS }, (_, index) => connection(index)));
    while (answered.length < ANSWERS_BEFORE_KILL) await new Promise((resolve) => setTimeout(resolve, 10));
    // A slow commit, as a busy database has them: another session keeps the table from taking rows
    // for a while, and the process is killed then.
    const locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE');
      await new Promise((resolve) => setTimeout(resolve, SLOW_COMMIT_MS));
      killed = true;
      first.process.kill('SIGKILL');
      expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }
    await load;

    await start();
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ content: string }>(
        `SELECT content FROM messages WHERE role = 'user' AND content = ANY($1::text[])`,
        [answered],
      );
      const stored = new Set(rows.map((row) => row.content));
      expect(answered.filter((text) => !stored.has(text))).toEqual([]);
    } finally {
      await db.end();
    }
  });
});
