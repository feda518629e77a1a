import { randomUUID } from 'node:crypto';
import { ChildService, emptyServerDatabase } from './support/child-service';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';

const SERVICE_KEY = `svc-${randomUUID()}`;
const UPSTREAM_KEY = `sk-default-${randomUUID()}`;
const CALLER_UPSTREAM_KEY = `sk-caller-${randomUUID()}`;
const WRONG_KEY = `wrong-${randomUUID()}`;
const COOKIE = `session-${randomUUID()}`;
const PROMPT = `my-private-prompt-${randomUUID()}`;
const STREAMED_PROMPT = `streamed-private-prompt-${randomUUID()}`;
const INGESTED = `ingested-private-text-${randomUUID()}`;

interface LogLine {
  level: string;
  msg: string;
  requestId?: string;
  context?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  durationMs?: number;
  route?: string;
}

/**
 * The built service as a child process at LOG_LEVEL=trace, its stdout read as the log: JSON lines, a
 * request id on every line logged for a request, one line per request, and no secret or conversation text.
 */
describe('Logs of the built service', () => {
  let fake: FakeOpenAI;
  let service: ChildService;
  let lines: LogLine[];
  let rawLog: string;
  const ids: Record<string, string> = {};

  const call = async (name: string, path: string, init: RequestInit = {}): Promise<Response> => {
    const res = await fetch(`${service.url}${path}`, init);
    await res.arrayBuffer();
    ids[name] = res.headers.get('x-request-id') ?? '';
    return res;
  };
  const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${SERVICE_KEY}`,
      cookie: `sid=${COOKIE}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const linesOf = (name: string) => lines.filter((line) => line.requestId === ids[name]);
  const requestLinesOf = (name: string) =>
    linesOf(name).filter((line) => line.msg === 'request completed' || line.msg === 'request failed');

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    await emptyServerDatabase();
    service = await ChildService.start({
      LOG_LEVEL: 'trace',
      SERVICE_API_KEY: SERVICE_KEY,
      UPSTREAM_BASE_URL: fake.url,
      UPSTREAM_API_KEY: UPSTREAM_KEY,
      EXTRACTOR: 'heuristic',
      INGEST_RATE_LIMIT_PER_MINUTE: '1',
    });
    await service.ready();

    await call('given', '/health', { headers: { 'x-request-id': 'trace-me-123' } });
    await call('generated', '/health');
    await call('unusable', '/health', { headers: { 'x-request-id': 'has spaces and "quotes"' } });
    await call(
      'chat',
      '/v1/chat/completions',
      json(
        { model: 'fake-model', messages: [{ role: 'user', content: PROMPT }] },
        { 'x-service-id': 'log-user', 'x-upstream-key': CALLER_UPSTREAM_KEY },
      ),
    );
    await call(
      'stream',
      '/v1/chat/completions',
      json(
        { model: 'fake-model', stream: true, messages: [{ role: 'user', content: STREAMED_PROMPT }] },
        { 'x-service-id': 'log-user' },
      ),
    );
    fake.script({ kind: 'disconnect' });
    await call(
      'dropped',
      '/v1/chat/completions',
      json(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'x-service-id': 'log-user' },
      ),
    );
    await call('ingest', '/api/profiles/log-user/ingest', json({ data: `I live in Oslo. ${INGESTED}` }));
    await call('limited', '/api/profiles/log-user/ingest', json({ data: INGESTED }));
    await call('rejected', '/api/profiles', { headers: { authorization: `Bearer ${WRONG_KEY}` } });
    await call('invalid', '/api/profiles', { ...json({}), body: '{"externalId": ' });
    await waitForBackgroundWork(service.url);

    const { code } = await service.stop();
    expect(code).toBe(0);
    rawLog = service.output.join('');
    lines = rawLog
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
  });

  afterAll(async () => {
    await service?.stop();
    await fake?.close();
  });

  it('writes JSON lines only', () => {
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(line).toEqual(expect.objectContaining({ level: expect.any(String) }));
  });

  it('takes the request id from X-Request-Id, or makes one, and returns it', () => {
    expect(ids.given).toBe('trace-me-123');
    expect(ids.generated).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids.unusable).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(Object.values(ids)).size).toBe(Object.keys(ids).length);
  });

  it('writes one line per request, with its id, status and duration', () => {
    for (const name of Object.keys(ids)) expect(requestLinesOf(name)).toHaveLength(1);
    expect(requestLinesOf('given')[0]).toMatchObject({
      msg: 'request completed',
      level: 'info',
      req: { method: 'GET', url: '/health' },
      res: { statusCode: 200 },
      route: '/health',
      durationMs: expect.any(Number),
    });
    expect(requestLinesOf('chat')[0]).toMatchObject({
      res: { statusCode: 200 },
      route: '/v1/chat/completions',
    });
    expect(requestLinesOf('stream')[0]).toMatchObject({ res: { statusCode: 200 }, completed: true });
    expect(requestLinesOf('limited')[0].res?.statusCode).toBe(429);
    expect(requestLinesOf('rejected')[0].res?.statusCode).toBe(401);
    expect(requestLinesOf('invalid')[0].res?.statusCode).toBe(400);
  });

  it("puts the request's id on the lines logged while handling it", () => {
    const fromHandling = linesOf('limited').filter((line) => line.context === 'RateLimit');
    expect(fromHandling).toHaveLength(1);
    expect(fromHandling[0].msg).toContain('rate limit "ingest"');
    // and on a proxy route, which the proxy's front door serves without Express
    const fromRelay = linesOf('dropped').filter((line) => line.context === 'Upstream');
    expect(fromRelay).toHaveLength(1);
    expect(fromRelay[0].msg).toContain('could not be reached');
    expect(requestLinesOf('dropped')[0]).toMatchObject({
      res: { statusCode: 502 },
      route: '/v1/chat/completions',
    });
  });

  it('never logs keys, cookies, prompts or completions', () => {
    for (const secret of [
      SERVICE_KEY,
      UPSTREAM_KEY,
      CALLER_UPSTREAM_KEY,
      WRONG_KEY,
      COOKIE,
      PROMPT,
      STREAMED_PROMPT,
      INGESTED,
    ]) {
      expect(rawLog).not.toContain(secret);
    }
    // the upstream did receive them: the test is about the log, not about a request that never happened
    expect(fake.requests.map((request) => request.rawBody).join('')).toContain(PROMPT);
  });
});

/** Waits until recording and extraction after the responses are done (read from /metrics). */
async function waitForBackgroundWork(url: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${SERVICE_KEY}` } });
    const text = await res.text();
    if (/^pms_background_tasks 0$/m.test(text) && /^pms_extraction_queue_messages 0$/m.test(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('background work did not finish');
}
