import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { AllExceptionsFilter } from '../src/common/all-exceptions.filter';
import { parsePrometheusText, valueOf } from './support/prometheus-text';
import { useTestApp } from './support/test-app';

const SERVICE_KEY = `svc-${randomUUID()}`;
const ALLOWED_ORIGIN = 'https://app.example';

/** What a client sees of an answer: status, body, and the names of the headers (values vary: date, ids). */
interface Seen {
  status: number;
  body: unknown;
  headers: string[];
}

const VARYING_HEADERS = new Set(['date', 'etag', 'content-length', 'connection', 'keep-alive']);

function seen(res: request.Response): Seen {
  return {
    status: res.status,
    body: res.body as unknown,
    headers: Object.keys(res.headers)
      .filter((name) => !VARYING_HEADERS.has(name))
      .sort(),
  };
}

type Send = (path: string) => request.Test;

/**
 * The proxy's POST routes are served by the front door (ProxyFrontDoor) ahead of Express; the same path
 * with a trailing slash still goes through Express's router and Nest. Both must answer every request
 * alike: same status, same body, same headers, same rate limit, same key check, same CORS.
 */
describe('The proxy front door answers as Express and Nest do', () => {
  const t = useTestApp({
    upstream: 'openai',
    serviceKey: SERVICE_KEY,
    env: { BODY_LIMIT: '1mb', CORS_ORIGINS: ALLOWED_ORIGIN },
  });
  let expressHandled: jest.SpyInstance;

  const post = (path: string, headers: Record<string, string> = {}) =>
    t
      .api()
      .post(path)
      .set({ Authorization: `Bearer ${SERVICE_KEY}`, 'X-Service-Id': 'front-door-user', ...headers });
  const chatBody = { model: 'fake-model', messages: [{ role: 'user', content: 'Hello there' }] };

  const scrape = async () =>
    parsePrometheusText(
      (await t.api().get('/metrics').set('Authorization', `Bearer ${SERVICE_KEY}`).expect(200)).text,
    );

  /** Sends the same request to the front door and, with a trailing slash, through Express. */
  const both = async (path: string, send: Send): Promise<[Seen, Seen]> => {
    expressHandled.mockClear();
    const direct = await send(path);
    expect(expressHandled).not.toHaveBeenCalled();
    const routed = await send(`${path}/`);
    expect(expressHandled).toHaveBeenCalledTimes(1);
    await t.drain();
    return [seen(direct), seen(routed)];
  };

  beforeAll(() => {
    const express: unknown = t.app.getHttpAdapter().getInstance();
    const router = express as { handle: (...args: unknown[]) => void };
    expressHandled = jest.spyOn(router, 'handle');
  });

  it('relays a chat without Express, counted and labelled by its route pattern', async () => {
    const labels = { method: 'POST', route: '/v1/chat/completions', status: '200' };
    const before = await scrape();
    const [direct, routed] = await both('/v1/chat/completions', (path) =>
      post(path, { Origin: ALLOWED_ORIGIN }).send({ ...chatBody, service: { skipExtraction: true } }),
    );
    expect(direct.status).toBe(200);
    expect(direct.headers).toEqual(routed.headers);
    expect(direct.headers).toEqual(
      expect.arrayContaining(['x-request-id', 'access-control-allow-origin', 'x-content-type-options']),
    );
    const contentOf = (body: unknown) =>
      (body as { choices: Array<{ message: { content: string } }> }).choices[0].message.content;
    expect(contentOf(direct.body)).toBe(contentOf(routed.body));
    const after = await scrape();
    const count = (exposition: typeof after) => valueOf(exposition, 'pms_http_requests_total', labels);
    expect(count(after) - count(before)).toBe(2);
  });

  it.each<[string, string, Send]>([
    [
      'malformed JSON',
      '/v1/chat/completions',
      (path) => post(path).set('content-type', 'application/json').send('{"model": '),
    ],
    [
      'a body over BODY_LIMIT',
      '/v1/chat/completions',
      (path) => post(path).send({ ...chatBody, pad: 'x'.repeat(1024 * 1024 + 10) }),
    ],
    [
      'a body that is not JSON',
      '/v1/chat/completions',
      (path) => post(path).set('content-type', 'text/plain').send('hello'),
    ],
    ['no user id', '/v1/chat/completions', (path) => post(path, { 'X-Service-Id': '' }).send(chatBody)],
    ['no model', '/v1/chat/completions', (path) => post(path).send({ messages: chatBody.messages })],
    ['no API key', '/v1/chat/completions', (path) => post(path, { Authorization: '' }).send(chatBody)],
    [
      'a wrong API key',
      '/v1/chat/completions',
      (path) => post(path, { Authorization: 'Bearer nope' }).send(chatBody),
    ],
    ['an invalid Messages body', '/v1/messages', (path) => post(path).send({ model: 'x', messages: 'no' })],
    [
      'malformed JSON to Messages',
      '/v1/messages',
      (path) => post(path).set('content-type', 'application/json').send('{'),
    ],
    ['an invalid Responses body', '/v1/responses', (path) => post(path).send({ model: 'x', input: 42 })],
    [
      'malformed JSON to embeddings',
      '/v1/embeddings',
      (path) => post(path).set('content-type', 'application/json').send('[1,'),
    ],
  ])('refuses %s with the same status, body and headers', async (_label, path, send) => {
    const [direct, routed] = await both(path, send);
    expect(direct.status).toBeGreaterThanOrEqual(400);
    expect(direct.status).toBeLessThan(500);
    expect(direct).toEqual(routed);
    expect(t.upstream.requests).toHaveLength(0);
  });

  it('labels a request the edge refused as unmatched, as Express does, and one it passed by its route', async () => {
    const count = (exposition: Awaited<ReturnType<typeof scrape>>, route: string, status: string) =>
      valueOf(exposition, 'pms_http_requests_total', { method: 'POST', route, status });
    const before = await scrape();
    await both('/v1/chat/completions', (path) =>
      post(path).set('content-type', 'application/json').send('{"model": '),
    );
    await both('/v1/chat/completions', (path) => post(path).send({ messages: chatBody.messages }));
    const after = await scrape();
    expect(count(after, 'unmatched', '400') - count(before, 'unmatched', '400')).toBe(2);
    expect(count(after, '/v1/chat/completions', '400') - count(before, '/v1/chat/completions', '400')).toBe(
      2,
    );
  });

  it('answers 500 in the envelope when the exception filter itself fails, instead of hanging', async () => {
    const filter = t.app.get(AllExceptionsFilter);
    const broken = jest.spyOn(filter, 'catch').mockImplementationOnce(() => {
      throw new Error('the filter broke');
    });
    try {
      const res = await post('/v1/chat/completions').send({ messages: chatBody.messages }).timeout(3000);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: expect.objectContaining({ code: 'internal_error' }) });
      expect(broken).toHaveBeenCalledTimes(1);
    } finally {
      broken.mockRestore();
    }
  });

  it('sends every other method and path through Express', async () => {
    expressHandled.mockClear();
    await t.api().get('/v1/chat/completions').expect(404);
    await t.api().post('/V1/CHAT/COMPLETIONS').expect(401); // Express matches paths in any case
    await t.api().options('/v1/chat/completions').set('Origin', ALLOWED_ORIGIN).expect(204);
    expect(expressHandled).toHaveBeenCalledTimes(3);
  });
});

describe('The proxy front door keeps the rate limit', () => {
  const t = useTestApp({ upstream: 'openai', env: { RATE_LIMIT_PER_MINUTE: '2' } });

  it('counts front-door and routed requests in one bucket and refuses alike', async () => {
    const chat = (path: string) =>
      t
        .api()
        .post(path)
        .set('X-Service-Id', 'limited-user')
        .send({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] });
    const first = await chat('/v1/chat/completions').expect(200);
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    const second = await chat('/v1/chat/completions/').expect(200);
    expect(second.headers['x-ratelimit-remaining']).toBe('0');
    const [direct, routed] = [
      seen(await chat('/v1/chat/completions').expect(429)),
      seen(await chat('/v1/chat/completions/').expect(429)),
    ];
    expect(direct.headers).toEqual(routed.headers);
    expect(direct.headers).toEqual(expect.arrayContaining(['retry-after', 'x-ratelimit-limit']));
    const codeOf = (body: unknown) => (body as { error: { code: string; type: string } }).error;
    expect(codeOf(direct.body)).toEqual(codeOf(routed.body));
    expect(codeOf(direct.body).code).toBe('rate_limit_exceeded');
    expect(t.upstream.requests).toHaveLength(2);
    await t.drain();
  });
});
