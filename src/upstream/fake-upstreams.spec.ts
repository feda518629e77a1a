import { Agent, request as httpRequest } from 'node:http';
import { startFakeAnthropic } from '../../test/support/fake-anthropic-upstream';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fake-openai-upstream';
import { parseSseStream, ChatCompletionStreamAccumulator, type SseEvent } from './sse';
import { UpstreamClient, type UpstreamResponse } from './upstream-client';

// Contract tests for the fake upstreams in test/support, which the proxy's e2e tests rely on.

const clients: UpstreamClient[] = [];
function clientFor(baseUrl: string, provider: 'openai' | 'anthropic' = 'openai'): UpstreamClient {
  const client = new UpstreamClient({
    baseUrl,
    apiKey: 'sk-k',
    provider,
    timeoutMs: 1_000,
    streamIdleTimeoutMs: 1_000,
  });
  clients.push(client);
  return client;
}
afterAll(() => Promise.all(clients.map((client) => client.destroy())));

async function events(response: UpstreamResponse): Promise<SseEvent[]> {
  const collected: SseEvent[] = [];
  for await (const event of parseSseStream(response.body)) collected.push(event);
  return collected;
}

const chat = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'ping pong' }], ...extra });

describe('fake OpenAI upstream', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ requireApiKey: 'sk-k', embeddingDimensions: 4 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('streams the default echo when asked to stream', async () => {
    const response = await clientFor(fake.url).send({
      method: 'POST',
      path: '/chat/completions',
      body: chat({ stream: true }),
    });
    const accumulator = new ChatCompletionStreamAccumulator();
    for await (const chunk of response.body) accumulator.push(chunk);
    expect(accumulator.text()).toBe('echo: ping pong');
    expect(accumulator.summary()).toMatchObject({ sawDone: true, malformedEvents: 0 });
  });

  it("inserts one unparsable event for then: 'malformed' and still finishes", async () => {
    fake.script({ kind: 'stream', chunks: ['a', 'b'], then: 'malformed' });
    const response = await clientFor(fake.url).send({
      method: 'POST',
      path: '/chat/completions',
      body: chat(),
    });
    const accumulator = new ChatCompletionStreamAccumulator();
    for await (const chunk of response.body) accumulator.push(chunk);
    expect(accumulator.summary()).toMatchObject({ sawDone: true, malformedEvents: 1 });
    expect(accumulator.text()).toBe('ab');
  });

  it('writes raw-sse entries verbatim and in order', async () => {
    fake.script({
      kind: 'raw-sse',
      lines: ['data: one\r\n\r\n', ': comment\n', 'data: two\n\n'],
      delayMs: 5,
    });
    const response = await clientFor(fake.url).send({
      method: 'POST',
      path: '/chat/completions',
      body: chat(),
    });
    expect((await events(response)).map((event) => event.data)).toEqual(['one', 'two']);
  });

  it('serves scripted JSON, then falls back to the default; reset clears the queue', async () => {
    const client = clientFor(fake.url);
    fake.script(
      { kind: 'json', status: 201, body: { custom: true } },
      { kind: 'json', body: { second: true } },
    );
    const first = await client.send({ method: 'POST', path: '/chat/completions', body: chat() });
    expect([first.status, await first.body.json()]).toEqual([201, { custom: true }]);
    fake.reset();
    const next = await client.send({ method: 'POST', path: '/chat/completions', body: chat() });
    expect(await next.body.json()).toMatchObject({ object: 'chat.completion' });
    expect(fake.requests).toHaveLength(1);
  });

  it('scripts other routes with scriptFor', async () => {
    fake.scriptFor('/v1/embeddings', { kind: 'error', status: 503 });
    const response = await clientFor(fake.url).send({
      method: 'POST',
      path: '/embeddings',
      body: '{"input":"x"}',
    });
    expect(response.status).toBe(503);
    expect(await response.body.json()).toMatchObject({ error: { type: 'server_error' } });
  });

  it('returns deterministic unit embeddings of the configured dimension', async () => {
    const client = clientFor(fake.url);
    const embed = async (input: unknown) => {
      const response = await client.send({
        method: 'POST',
        path: '/embeddings',
        body: JSON.stringify({ input }),
      });
      return ((await response.body.json()) as { data: Array<{ embedding: number[] }> }).data.map(
        (d) => d.embedding,
      );
    };
    const [a1, b] = await embed(['alpha', 'beta']);
    const [a2] = await embed('alpha');
    expect(a1).toHaveLength(4);
    expect(a1).toEqual(a2);
    expect(a1).not.toEqual(b);
    expect(Math.hypot(...a1)).toBeCloseTo(1, 10);
  });

  it('lists models, rejects a wrong key with 401 and unknown routes with 404', async () => {
    const client = clientFor(fake.url);
    const models = await client.send({ method: 'GET', path: '/models' });
    expect(await models.body.json()).toMatchObject({
      object: 'list',
      data: expect.arrayContaining([expect.objectContaining({ id: 'fake-model', object: 'model' })]),
    });
    const unauthorised = await client.send({ method: 'GET', path: '/models', apiKey: 'sk-wrong' });
    expect(unauthorised.status).toBe(401);
    await unauthorised.body.dump();
    const missing = await client.send({ method: 'GET', path: '/nothing' });
    expect(missing.status).toBe(404);
    await missing.body.dump();
  });

  it('counts in-flight requests until they finish', async () => {
    fake.script({ kind: 'stream', chunks: ['x'], then: 'hang' });
    const response = await clientFor(fake.url).send({
      method: 'POST',
      path: '/chat/completions',
      body: chat(),
    });
    expect(fake.inFlight()).toBe(1);
    response.body.destroy();
    await fake.waitForClientClose(0);
    expect(fake.inFlight()).toBe(0);
    expect(fake.requests[0]).toMatchObject({ completed: false, closedByClient: true });
  });

  it('close() also ends idle keep-alive connections', async () => {
    const own = await startFakeOpenAI();
    const socketClosed = new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${own.url}/models`, {
        agent: new Agent({ keepAlive: true }),
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          req.socket?.once('close', () => resolve());
          void own.close();
        });
      });
      req.on('error', reject);
      req.end();
    });
    await expect(socketClosed).resolves.toBeUndefined();
  });
});

describe('fake Anthropic upstream', () => {
  it('streams the default echo in Anthropic event order', async () => {
    const fake = await startFakeAnthropic();
    try {
      const body = JSON.stringify({
        model: 'claude-fake-large',
        stream: true,
        messages: [{ role: 'user', content: 'yo' }],
      });
      const response = await clientFor(fake.url, 'anthropic').send({
        method: 'POST',
        path: '/messages',
        body,
      });
      const received = await events(response);
      expect(received.map((event) => event.event)).toEqual([
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(received.every((event) => JSON.parse(event.data).type === event.event)).toBe(true);
      expect(JSON.parse(received[3].data).delta).toEqual({ type: 'text_delta', text: 'echo: yo' });
    } finally {
      await fake.close();
    }
  });

  it('requires anthropic-version and answers errors in Anthropic shape', async () => {
    const fake = await startFakeAnthropic();
    try {
      const plain = clientFor(fake.url, 'openai');
      const missingVersion = await plain.send({ method: 'GET', path: '/models' });
      expect(missingVersion.status).toBe(400);
      await missingVersion.body.dump();

      fake.script({ kind: 'error', status: 529, errorType: 'overloaded_error', message: 'busy' });
      const overloaded = await clientFor(fake.url, 'anthropic').send({
        method: 'POST',
        path: '/messages',
        body: '{}',
      });
      expect(overloaded.status).toBe(529);
      expect(await overloaded.body.json()).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: 'busy' },
      });
    } finally {
      await fake.close();
    }
  });
});
