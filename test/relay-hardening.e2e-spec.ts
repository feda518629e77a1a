import { request as httpRequest, type IncomingMessage } from 'node:http';
import { ChildService } from './support/child-service';
import { expectEnvelope, makeMemory, makeProfile } from './support/factories';
import { TestApp, useTestApp } from './support/test-app';
import { openaiClient } from './support/clients';

// far above the fake upstream's 600 ms pauses, which a loaded machine stretches
const IDLE_TIMEOUT_MS = 2500;
const KEEP_ALIVE_MS = 150;

/** What a slow or vanishing client, a silent upstream and odd headers do to the relay. */
describe('Relay: clients that go away or stop reading, silent upstreams, headers', () => {
  const t = useTestApp({
    upstream: 'openai',
    env: {
      UPSTREAM_TIMEOUT_MS: '3000',
      UPSTREAM_STREAM_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
      UPSTREAM_STREAM_KEEPALIVE_MS: String(KEEP_ALIVE_MS),
    },
  });
  let userSeq = 0;
  const nextUser = () => `relay-user-${++userSeq}`;
  const chatBody = (stream: boolean, content = 'Hello') => ({
    model: 'fake-model',
    stream,
    messages: [{ role: 'user', content }],
  });
  const storedMessages = async (userId: string) => {
    const res = await t.api().get(`/api/profiles/${encodeURIComponent(userId)}/export`);
    return res.status === 404 ? [] : (res.body.messages as Array<{ role: string; content: string }>);
  };

  describe('streams', () => {
    it('sends keep-alive comments while the upstream is silent, and clients still read the stream', async () => {
      t.upstream.script({ kind: 'stream', chunks: ['slow ', 'answer'], delayMs: 600 });
      const res = await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', nextUser())
        .send(chatBody(true));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.text).toMatch(/\n\n: keep-alive\n\n/);
      // every comment sits between two events, never inside one
      for (const block of res.text.split('\n\n').filter(Boolean)) {
        expect(block.startsWith(': keep-alive') || block.startsWith('data: ')).toBe(true);
      }

      t.upstream.script({ kind: 'stream', chunks: ['slow ', 'answer'], delayMs: 600 });
      const sdk = openaiClient(t, null);
      const stream = await sdk.chat.completions.create(
        { model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'Hello' }] },
        { headers: { 'X-Service-Id': nextUser() } },
      );
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe('slow answer');
    });

    it('keeps no listeners behind while a slow client reads a long stream', async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      process.on('warning', onWarning);
      try {
        const piece = 'x'.repeat(64 * 1024);
        t.upstream.script({ kind: 'stream', chunks: Array.from({ length: 120 }, () => piece) });
        const userId = nextUser();
        const received = await readSlowly(t.url, userId, 5);
        expect(received).toContain('[DONE]');
        await t.drain();
        expect((await storedMessages(userId)).map((m) => m.role)).toEqual(['user', 'assistant']);
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    });

    it('cuts a client that stops reading for longer than the idle timeout, and aborts the upstream', async () => {
      const piece = 'y'.repeat(64 * 1024);
      t.upstream.script({ kind: 'stream', chunks: Array.from({ length: 400 }, () => piece), then: 'hang' });
      const userId = nextUser();
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest(`${t.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-id': userId },
        });
        req.on('response', resolve);
        req.on('error', reject);
        req.end(JSON.stringify(chatBody(true)));
      });
      res.pause(); // reads nothing: the buffers fill and the relay waits, then gives up on this client
      await t.upstream.waitForClientClose(0, 10_000); // the upstream request was aborted
      let tail = '';
      res.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('latin1')).slice(-100)));
      await new Promise((resolve) => {
        res.on('error', resolve);
        res.socket.once('close', resolve);
        res.resume();
      });
      expect(tail).not.toContain('[DONE]');
      await t.drain();
      expect(await storedMessages(userId)).toEqual([]);
    });
  });

  describe('a client that leaves before the relay starts', () => {
    it('is noticed: the upstream is never called and nothing is recorded', async () => {
      const userId = nextUser();
      // Holds the request before the relay: the context waits for the profile row, locked here.
      const profile = await makeProfile(t, userId);
      await makeMemory(t, profile.id, { content: 'User likes tea' });
      const lock = await lockProfiles(t);
      const req = httpRequest(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-id': userId },
      });
      req.on('error', () => undefined);
      req.end(JSON.stringify(chatBody(false)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      req.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await lock.release();
      await t.drain();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(t.upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
      expect(await storedMessages(userId)).toEqual([]);
    });
  });

  describe('recording', () => {
    it('stores the turn with the request id of its log line', async () => {
      const userId = nextUser();
      await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', userId)
        .set('X-Request-Id', 'req-relay-42')
        .send(chatBody(false, 'Which id?'))
        .expect(200);
      await t.drain();
      const rows: Array<{ request_id: string }> = await t.dataSource.query(
        `SELECT m.request_id FROM messages m JOIN profiles p ON p.id = m.profile_id WHERE p.external_id = $1`,
        [userId],
      );
      expect(rows.map((row) => row.request_id)).toEqual(['req-relay-42', 'req-relay-42']);
    });
  });

  describe('headers', () => {
    it('reads X-Service-Id as UTF-8, so it names the same profile as the id sent in JSON', async () => {
      // superagent sends header text as UTF-8 bytes, as most clients do
      await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'müller-ß')
        .send(chatBody(false))
        .expect(200);
      await t
        .api()
        .post('/v1/chat/completions')
        .send({ ...chatBody(false), user: 'müller-ß' })
        .expect(200);
      await t.drain();
      const profile = await t
        .api()
        .get(`/api/profiles/${encodeURIComponent('müller-ß')}`)
        .expect(200);
      expect(profile.body.profile.externalId).toBe('müller-ß');
      const all = await t.api().get('/api/profiles?search=ller').expect(200);
      expect(all.body.profiles.map((p: { externalId: string }) => p.externalId)).toEqual(['müller-ß']);
    });

    it('refuses an X-Service-Id that is not UTF-8 with 400 invalid_user_id', async () => {
      // node's client writes header text as Latin-1: here the single byte 0xFC, which is not UTF-8
      const res = await rawPost(
        t.url,
        '/v1/chat/completions',
        { 'x-service-id': 'm\u00fcller' },
        chatBody(false),
      );
      expect(res.status).toBe(400);
      expectEnvelope(JSON.parse(res.body), 'invalid_user_id');
    });

    it('answers a non-string user id with invalid_user_id, whichever field carries it', async () => {
      for (const body of [
        { ...chatBody(false), user: 123 },
        { ...chatBody(false), metadata: { profile_id: 7 } },
      ]) {
        const res = await t.api().post('/v1/chat/completions').send(body).expect(400);
        expectEnvelope(res.body, 'invalid_user_id');
      }
    });

    it('treats every charset but UTF-8 alike: 415 unsupported_media_type', async () => {
      for (const charset of ['utf-16', 'latin1', 'utf-32', 'iso-8859-1']) {
        const res = await t
          .api()
          .post('/api/profiles')
          .set('content-type', `application/json; charset=${charset}`)
          .send(JSON.stringify({ externalId: `charset-${charset}` }));
        expect({ charset, status: res.status }).toEqual({ charset, status: 415 });
        expectEnvelope(res.body, 'unsupported_media_type');
      }
      await t
        .api()
        .post('/api/profiles')
        .set('content-type', 'application/json; charset="UTF-8"')
        .send(JSON.stringify({ externalId: 'charset-utf8' }))
        .expect(201);
    });
  });
});

describe('Relay: an upstream that cannot be reached', () => {
  const t = useTestApp({ env: { UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1' } });

  it('answers 502 naming the upstream host and the cause', async () => {
    for (const path of ['/v1/chat/completions', '/v1/models']) {
      const res =
        path === '/v1/models'
          ? await t.api().get(path).expect(502)
          : await t
              .api()
              .post(path)
              .set('X-Service-Id', 'unreachable')
              .send({
                model: 'm',
                messages: [{ role: 'user', content: 'x' }],
              });
      expect(res.status).toBe(502);
      const error = expectEnvelope(res.body, 'upstream_unavailable');
      expect(error.message).toContain('127.0.0.1:9');
      expect(error.message).toContain('refused (ECONNREFUSED)');
    }
  });
});

function rawPost(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: object,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
    });
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    // A Buffer body keeps the headers in their own write, in Latin-1 (a string body would carry them as UTF-8).
    req.end(Buffer.from(JSON.stringify(body)));
  });
}

/** Reads a streamed chat answer, pausing between reads so that the server's writes fill the buffers. */
function readSlowly(url: string, userId: string, pauseMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-id': userId },
    });
    req.on('response', (res: IncomingMessage) => {
      let tail = '';
      res.on('data', (chunk: Buffer) => {
        tail = (tail + chunk.toString('latin1')).slice(-200);
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      });
      res.on('end', () => resolve(tail));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(
      JSON.stringify({
        model: 'fake-model',
        stream: true,
        messages: [{ role: 'user', content: 'Long, please' }],
      }),
    );
  });
}

/** Locks the profiles table in a transaction of its own: the context query waits until it is released. */
async function lockProfiles(t: TestApp): Promise<{ release: () => Promise<void> }> {
  const runner = t.dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  await runner.query(`LOCK TABLE profiles IN ACCESS EXCLUSIVE MODE`);
  return {
    release: async () => {
      await runner.commitTransaction();
      await runner.release();
    },
  };
}

describe('Relay: the log of an upstream that cannot be reached', () => {
  it('says at warn, once, what the answer says', async () => {
    const service = await ChildService.start({
      UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
      LOG_LEVEL: 'warn',
    });
    try {
      await service.ready();
      const messages: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${service.url}/v1/models`);
        expect(res.status).toBe(502);
        messages.push(((await res.json()) as { error: { message: string } }).error.message);
      }
      // the child's log lines reach this process through a pipe, a moment after its answers
      const upstreamLines = () =>
        service.output
          .join('')
          .split('\n')
          .filter((line) => line.includes('"context":"Upstream"'));
      for (let waited = 0; upstreamLines().length === 0 && waited < 5000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 200)); // a second line would be here by now
      const warnings = upstreamLines().map((line) => JSON.parse(line) as { level: string; msg: string });
      expect(warnings).toEqual([{ ...warnings[0], level: 'warn', msg: messages[0] }]);
      expect(new Set(messages).size).toBe(1);
    } finally {
      await service.stop();
    }
  });
});
