import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeAnthropic, type FakeAnthropic } from '../../test/support/fake-anthropic-upstream';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fake-openai-upstream';
import { ChatCompletionStreamAccumulator } from './sse';
import {
  ANTHROPIC_API_VERSION,
  classifyUpstreamFailure,
  relayHeaders,
  UpstreamClient,
  UpstreamPathError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  type UpstreamClientOptions,
  type UpstreamResponse,
} from './upstream-client';

const TIMEOUT_MS = 400;
const IDLE_MS = 300;

async function readAll(response: UpstreamResponse): Promise<string> {
  return response.body.text();
}

async function captureError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const chatBody = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'hi there' }], ...extra });

describe('UpstreamClient against the fake OpenAI upstream', () => {
  let fake: FakeOpenAI;
  const clients: UpstreamClient[] = [];
  const makeClient = (overrides: Partial<UpstreamClientOptions> = {}): UpstreamClient => {
    const client = new UpstreamClient({
      baseUrl: fake.url,
      apiKey: 'sk-config',
      timeoutMs: TIMEOUT_MS,
      streamIdleTimeoutMs: IDLE_MS,
      ...overrides,
    });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.destroy()));
    await fake.close();
  });

  it('posts JSON to the joined path with the configured key as a bearer token', async () => {
    const client = makeClient();
    const response = await client.send({ method: 'POST', path: '/chat/completions', body: chatBody() });

    expect(response.status).toBe(200);
    expect(JSON.parse(await readAll(response))).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'echo: hi there' } }],
    });
    const [recorded] = fake.requests;
    expect(recorded.method).toBe('POST');
    expect(recorded.path).toBe('/v1/chat/completions');
    expect(recorded.headers.authorization).toBe('Bearer sk-config');
    expect(recorded.headers['content-type']).toBe('application/json');
    expect(recorded.headers.accept).toBe('application/json');
    expect(recorded.headers['accept-encoding']).toBe('identity');
    expect(recorded.body).toEqual(JSON.parse(chatBody()));
  });

  it('lets a per-request key win and passes accept through, but not caller auth or host headers', async () => {
    const client = makeClient();
    const response = await client.send({
      method: 'POST',
      path: '/chat/completions',
      body: chatBody(),
      apiKey: 'sk-override',
      headers: { Accept: 'text/event-stream', Authorization: 'Bearer sk-smuggled', Host: 'evil.example' },
    });
    await readAll(response);

    const [recorded] = fake.requests;
    expect(recorded.headers.authorization).toBe('Bearer sk-override');
    expect(recorded.headers.accept).toBe('text/event-stream');
    expect(recorded.headers.host).toBe(new URL(fake.url).host);
  });

  it('sends no authorization header when no key is known', async () => {
    const client = makeClient({ apiKey: undefined });
    await readAll(await client.send({ method: 'GET', path: '/models' }));
    expect(fake.requests[0].headers.authorization).toBeUndefined();
    expect(fake.requests[0].headers['content-type']).toBeUndefined();
  });

  it('allows a query string on the path', async () => {
    const client = makeClient();
    await readAll(await client.send({ method: 'GET', path: '/models?limit=5' }));
    expect(fake.requests[0].path).toBe('/v1/models?limit=5');
  });

  it.each([
    'https://evil.example/v1/chat/completions',
    '//evil.example/chat/completions',
    'chat/completions',
    '/../admin',
    '/chat/../../admin',
    '/%2e%2e/admin',
    '/chat%2F%2Fx',
    '/chat//completions',
    '/chat\\completions',
    '/chat completions',
    '/chat\r\nx-injected: 1',
    '/models?after=..',
  ])('refuses the path %j without calling the upstream', async (path) => {
    const client = makeClient();
    await expect(client.send({ method: 'GET', path })).rejects.toBeInstanceOf(UpstreamPathError);
    expect(fake.requests).toHaveLength(0);
  });

  it('rejects base URLs that are not plain http(s) roots', () => {
    const options = { timeoutMs: 1, streamIdleTimeoutMs: 1 };
    expect(() => new UpstreamClient({ ...options, baseUrl: 'ftp://example.com/v1' })).toThrow();
    expect(() => new UpstreamClient({ ...options, baseUrl: 'http://user:pw@example.com/v1' })).toThrow();
    expect(() => new UpstreamClient({ ...options, baseUrl: 'http://example.com/v1?x=1' })).toThrow();
  });

  it('relays error statuses and bodies as responses, not exceptions', async () => {
    const client = makeClient();
    fake.script({ kind: 'error', status: 429, headers: { 'retry-after': '2', 'set-cookie': 'a=b' } });
    const response = await client.send({ method: 'POST', path: '/chat/completions', body: chatBody() });

    expect(response.status).toBe(429);
    expect(JSON.parse(await readAll(response))).toMatchObject({ error: { type: 'rate_limit_exceeded' } });
    expect(relayHeaders(response.headers)).toEqual({
      'content-type': 'application/json',
      'retry-after': '2',
      'x-upstream-request-id': expect.stringMatching(/^req_fake_/),
      'openai-processing-ms': '1',
    });
  });

  it('throws UpstreamTimeoutError when headers do not arrive within timeoutMs', async () => {
    const client = makeClient();
    fake.script({ kind: 'hang' });
    const started = Date.now();
    const error = await captureError(
      client.send({ method: 'POST', path: '/chat/completions', body: chatBody() }),
    );

    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect((error as Error).cause).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it('throws UpstreamUnavailableError when the connection is refused', async () => {
    const port = await freePort();
    const client = makeClient({ baseUrl: `http://127.0.0.1:${port}/v1` });
    const error = await captureError(client.send({ method: 'GET', path: '/models' }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as Error).cause).toBeDefined();
  });

  it('throws UpstreamUnavailableError when the host name does not resolve', async () => {
    // .invalid is reserved (RFC 2606) and never resolves.
    const client = makeClient({ baseUrl: 'http://upstream.invalid/v1', timeoutMs: 5_000 });
    const error = await captureError(client.send({ method: 'GET', path: '/models' }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as Error).cause).toMatchObject({ code: expect.stringMatching(/^(ENOTFOUND|EAI_AGAIN)$/) });
  });

  it('throws UpstreamUnavailableError when the upstream drops the socket before answering', async () => {
    const client = makeClient();
    fake.script({ kind: 'disconnect' });
    const error = await captureError(
      client.send({ method: 'POST', path: '/chat/completions', body: chatBody() }),
    );
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
  });

  it('propagates an abort before headers to the upstream socket and rethrows the abort itself', async () => {
    const client = makeClient({ timeoutMs: 5_000 });
    fake.script({ kind: 'hang' });
    const controller = new AbortController();
    const sending = client.send({
      method: 'POST',
      path: '/chat/completions',
      body: chatBody(),
      signal: controller.signal,
    });
    await fake.waitForRequests(1);
    expect(fake.inFlight()).toBe(1);

    controller.abort();
    const error = await captureError(sending);

    expect(error).toMatchObject({ name: 'AbortError' });
    expect(classifyUpstreamFailure(error)).toBeUndefined();
    await fake.waitForClientClose(0);
    expect(fake.inFlight()).toBe(0);
  });

  it('yields stream chunks as they arrive and aborts the upstream mid-stream', async () => {
    const client = makeClient({ streamIdleTimeoutMs: 5_000 });
    fake.script({ kind: 'stream', chunks: ['Hel', 'lo'], delayMs: 20, then: 'hang' });
    const controller = new AbortController();
    const response = await client.send({
      method: 'POST',
      path: '/chat/completions',
      body: chatBody({ stream: true }),
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);

    const accumulator = new ChatCompletionStreamAccumulator();
    const reading = (async () => {
      for await (const chunk of response.body) {
        accumulator.push(chunk);
        // The upstream never finishes this response, so seeing all content proves nothing waits for the end.
        if (accumulator.text() === 'Hello') {
          expect(fake.requests[0].completed).toBe(false);
          controller.abort();
        }
      }
    })();

    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    expect(accumulator.text()).toBe('Hello');
    await fake.waitForClientClose(0);
  });

  it('applies streamIdleTimeoutMs between chunks, not to the whole stream', async () => {
    const client = makeClient();
    const pieces = ['a', 'b', 'c', 'd', 'e', 'f'];
    fake.script({ kind: 'stream', chunks: pieces, delayMs: IDLE_MS / 3 });
    const started = Date.now();
    const response = await client.send({
      method: 'POST',
      path: '/chat/completions',
      body: chatBody({ stream: true }),
    });
    const accumulator = new ChatCompletionStreamAccumulator();
    for await (const chunk of response.body) accumulator.push(chunk);
    accumulator.end();

    expect(Date.now() - started).toBeGreaterThan(IDLE_MS * 2);
    expect(accumulator.summary()).toMatchObject({ sawDone: true, malformedEvents: 0 });
    expect(accumulator.text()).toBe('abcdef');
  });

  it('fails a stream that goes silent for streamIdleTimeoutMs with a classifiable timeout', async () => {
    const client = makeClient();
    fake.script({ kind: 'stream', chunks: ['only'], then: 'hang' });
    const response = await client.send({
      method: 'POST',
      path: '/chat/completions',
      body: chatBody({ stream: true }),
    });
    const error = await captureError(
      (async () => {
        for await (const _chunk of response.body) {
          // drain
        }
      })(),
    );

    const classified = classifyUpstreamFailure(error);
    expect(classified).toBeInstanceOf(UpstreamTimeoutError);
    expect(classified?.cause).toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
  });

  it('classifies an upstream that cuts a stream midway as unavailable', async () => {
    const client = makeClient();
    fake.script({ kind: 'stream', chunks: ['par', 'tial'], then: 'disconnect' });
    const response = await client.send({
      method: 'POST',
      path: '/chat/completions',
      body: chatBody({ stream: true }),
    });
    const error = await captureError(readAll(response));
    expect(classifyUpstreamFailure(error)).toBeInstanceOf(UpstreamUnavailableError);
  });

  it('reuses keep-alive connections for sequential requests', async () => {
    const client = makeClient();
    for (let i = 0; i < 10; i++) {
      await readAll(await client.send({ method: 'POST', path: '/chat/completions', body: chatBody() }));
    }
    // undici may open a second socket while the first is still being released; never one per request.
    const ports = new Set(fake.requests.map((request) => request.remotePort));
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('serves 32 concurrent requests on separate pooled connections', async () => {
    // the file's short timeout is for the timeout tests: 32 answers on a busy test machine may take longer
    const client = makeClient({ timeoutMs: 10_000 });
    const bodies = await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        const body = JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: `n${i}` }] });
        const response = await client.send({ method: 'POST', path: '/chat/completions', body });
        return JSON.parse(await readAll(response)).choices[0].message.content as string;
      }),
    );
    expect(bodies).toEqual(Array.from({ length: 32 }, (_, i) => `echo: n${i}`));
  });
});

describe('UpstreamClient in anthropic mode', () => {
  let fake: FakeAnthropic;
  let client: UpstreamClient;

  beforeAll(async () => {
    fake = await startFakeAnthropic({ requireApiKey: 'sk-ant-config' });
    client = new UpstreamClient({
      baseUrl: fake.url,
      apiKey: 'sk-ant-config',
      timeoutMs: TIMEOUT_MS,
      streamIdleTimeoutMs: IDLE_MS,
      provider: 'anthropic',
    });
  });
  afterAll(async () => {
    await client.destroy();
    await fake.close();
  });

  it('authenticates with x-api-key and anthropic-version instead of a bearer token', async () => {
    const body = JSON.stringify({
      model: 'claude-fake-large',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hey' }],
    });
    const response = await client.send({ method: 'POST', path: '/messages', body });

    expect(response.status).toBe(200);
    expect(JSON.parse(await readAll(response))).toMatchObject({
      type: 'message',
      content: [{ text: 'echo: hey' }],
    });
    const [recorded] = fake.requests;
    expect(recorded.headers['x-api-key']).toBe('sk-ant-config');
    expect(recorded.headers['anthropic-version']).toBe(ANTHROPIC_API_VERSION);
    expect(recorded.headers.authorization).toBeUndefined();
  });

  it('uses the per-request key as x-api-key', async () => {
    const response = await client.send({ method: 'GET', path: '/models', apiKey: 'sk-ant-wrong' });
    expect(response.status).toBe(401);
    await readAll(response);
  });
});

describe('relayHeaders', () => {
  const upstream = {
    'content-type': 'text/event-stream',
    'content-length': '123',
    'transfer-encoding': 'chunked',
    connection: 'keep-alive',
    'keep-alive': 'timeout=5',
    'set-cookie': ['a=1', 'b=2'],
    'content-encoding': 'gzip',
    'x-request-id': 'req_1',
    'request-id': 'req_2',
    'openai-processing-ms': '12',
    'openai-organization': 'org-secret',
    'x-ratelimit-remaining-requests': '99',
    'anthropic-ratelimit-tokens-remaining': '1000',
    'retry-after': '3',
    server: 'cloudflare',
    date: 'Tue, 01 Jan 2030 00:00:00 GMT',
    'X-Mixed-Case': undefined,
  };

  it('keeps content type, request ids, rate-limit and retry headers only', () => {
    expect(relayHeaders(upstream)).toEqual({
      'content-type': 'text/event-stream',
      'content-encoding': 'gzip',
      'x-upstream-request-id': 'req_1',
      'request-id': 'req_2',
      'openai-processing-ms': '12',
      'x-ratelimit-remaining-requests': '99',
      'anthropic-ratelimit-tokens-remaining': '1000',
      'retry-after': '3',
    });
  });

  it('drops content-encoding once the body was decoded', () => {
    expect(relayHeaders(upstream, { bodyDecoded: true })).not.toHaveProperty('content-encoding');
  });

  it('normalises header names to lower case', () => {
    expect(relayHeaders({ 'Content-Type': 'application/json', 'X-RateLimit-Limit-Requests': '5' })).toEqual({
      'content-type': 'application/json',
      'x-ratelimit-limit-requests': '5',
    });
  });
});
