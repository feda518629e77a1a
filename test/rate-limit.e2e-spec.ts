import { randomInt, randomUUID } from 'node:crypto';
import { expectEnvelope, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A client address of the IPv6 documentation range, new for every call, so that runs never share a bucket. */
const newClient = () => {
  const hextet = () => randomInt(0, 0x10000).toString(16);
  // The service believes the last address added by a trusted proxy (loopback): the rightmost one.
  return { 'X-Forwarded-For': `198.51.100.7, 2001:db8:${hextet()}:${hextet()}::1` };
};

const expectLimited = (
  res: { status: number; headers: Record<string, string>; body: unknown },
  limit: number,
) => {
  expect(res.status).toBe(429);
  const error = expectEnvelope(res.body, 'rate_limit_exceeded');
  expect(error.type).toBe('rate_limit_error');
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
};

describe('Rate limits', () => {
  describe('per client address, in memory, behind a trusted proxy', () => {
    const t = useTestApp({
      env: {
        RATE_LIMIT_PER_MINUTE: '3',
        INGEST_RATE_LIMIT_PER_MINUTE: '2',
        TRUST_PROXY: 'loopback',
        EXTRACTOR: 'heuristic',
      },
    });

    it('refuses the request after the configured count with 429, the envelope and the headers', async () => {
      const client = newClient();
      for (let i = 1; i <= 3; i++) {
        const res = await t.api().get('/api/profiles').set(client).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        expect(res.headers['x-ratelimit-remaining']).toBe(String(3 - i));
        expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
        expect(Number(res.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60);
      }
      expectLimited(await t.api().get('/api/profiles').set(client), 3);
      // one bucket for all the routes of the general limit
      expectLimited(await t.api().post('/api/profiles').set(client).send({ externalId: 'x' }), 3);
      expectLimited(await t.api().get('/v1/models').set(client), 3);
    });

    it('gives two clients two buckets', async () => {
      const first = newClient();
      const second = { 'X-Forwarded-For': '192.0.2.77' };
      for (let i = 0; i < 3; i++) await t.api().get('/api/profiles').set(first).expect(200);
      expectLimited(await t.api().get('/api/profiles').set(first), 3);
      const res = await t.api().get('/api/profiles').set(second).expect(200);
      expect(res.headers['x-ratelimit-remaining']).toBe('2');
    });

    it('limits ingest with its own, separate bucket', async () => {
      const client = newClient();
      const profile = await t
        .api()
        .post('/api/profiles')
        .set(client)
        .send({ externalId: `u-${randomUUID()}` });
      expect(profile.status).toBe(201);
      const ingest = () =>
        t
          .api()
          .post(`/api/profiles/${profile.body.profile.id}/ingest`)
          .set(client)
          .send({ data: 'I live in Lisbon.' });
      for (let i = 1; i <= 2; i++) {
        const res = await ingest().expect(200);
        expect(res.headers['x-ratelimit-limit']).toBe('2');
        expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      }
      expectLimited(await ingest(), 2);
      // the general bucket was not touched by ingest: 1 of 3 used by the create
      const other = await t.api().get('/api/profiles').set(client).expect(200);
      expect(other.headers['x-ratelimit-remaining']).toBe('1');
      await t.api().get('/api/profiles').set(client).expect(200);
      expectLimited(await t.api().get('/api/profiles').set(client), 3);
    });

    it('does not limit probes, metrics or the API docs', async () => {
      const client = newClient();
      for (let i = 0; i < 5; i++) {
        for (const path of ['/health', '/ready', '/metrics', '/docs-json']) {
          const res = await t.api().get(path).set(client).expect(200);
          expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        }
      }
    });
  });

  describe('without TRUST_PROXY, and with a limit of 0', () => {
    const t = useTestApp({ env: { RATE_LIMIT_PER_MINUTE: '0', INGEST_RATE_LIMIT_PER_MINUTE: '1' } });

    it('turns a limit off with 0: no refusals, no headers', async () => {
      for (let i = 0; i < 20; i++) {
        const res = await t.api().get('/api/profiles').expect(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });

    it('ignores X-Forwarded-For from an untrusted peer, so a client cannot pick a fresh bucket', async () => {
      const profile = await makeProfile(t);
      const ingest = (forwardedFor: string) =>
        t
          .api()
          .post(`/api/profiles/${profile.id}/ingest`)
          .set('X-Forwarded-For', forwardedFor)
          .send({ data: 'I like tea.' });
      await ingest('192.0.2.1').expect(200);
      expectLimited(await ingest('192.0.2.2'), 1);
    });
  });

  describe('in Redis, shared by two replicas', () => {
    const env = { REDIS_URL, TRUST_PROXY: 'loopback', RATE_LIMIT_PER_MINUTE: '3' };
    const first = useTestApp({ env });
    const second = useTestApp({ env });

    it('counts a client once across replicas', async () => {
      const client = newClient();
      await first.api().get('/api/profiles').set(client).expect(200);
      await second.api().get('/api/profiles').set(client).expect(200);
      const third = await first.api().get('/api/profiles').set(client).expect(200);
      expect(third.headers['x-ratelimit-remaining']).toBe('0');
      expectLimited(await second.api().get('/api/profiles').set(client), 3);
      expectLimited(await first.api().get('/api/profiles').set(client), 3);
      await second.api().get('/api/profiles').set(newClient()).expect(200);
    });
  });
});
