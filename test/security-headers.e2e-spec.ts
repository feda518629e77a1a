import helmet from 'helmet';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestApp } from './support/test-app';

/** The headers of a response from a bare Node server that runs helmet() with its defaults. */
async function helmetHeaders(): Promise<Headers> {
  const security = helmet();
  const server: Server = createServer((req, res) => {
    security(req, res, () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return (await fetch(`http://127.0.0.1:${port}/`)).headers;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('Security headers and CORS', () => {
  describe('by default (no CORS_ORIGINS)', () => {
    const t = useTestApp();

    it('sends helmet headers and no framework banner', async () => {
      const res = await t.api().get('/api/profiles').expect(200);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it("sends helmet's headers with helmet's values, on the API and on the proxy", async () => {
      const expected = await helmetHeaders();
      const names = [...expected.keys()].filter(
        (name) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name),
      );
      expect(names.length).toBeGreaterThan(8);
      const api = await t.api().get('/api/profiles').expect(200);
      const proxy = await t.api().post('/v1/chat/completions').send({}).expect(400);
      for (const res of [api, proxy]) {
        for (const name of names) expect([name, res.headers[name]]).toEqual([name, expected.get(name)]);
      }
    });

    it('sends no CORS headers, also not to a browser origin', async () => {
      const res = await t.api().get('/api/profiles').set('Origin', 'https://app.example').expect(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await t
        .api()
        .options('/api/profiles')
        .set('Origin', 'https://app.example')
        .set('Access-Control-Request-Method', 'GET');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('keeps the Swagger UI working under the content security policy: page, script and styles from itself', async () => {
      const page = await t.api().get('/docs/').expect(200);
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      const scripts = [...page.text.matchAll(/<script src="([^"]+)"/g)].map((match) => match[1]);
      const styles = [...page.text.matchAll(/<link rel="stylesheet" type="text\/css" href="([^"]+)"/g)].map(
        (match) => match[1],
      );
      expect(scripts.length).toBeGreaterThan(0);
      expect(page.text).not.toMatch(/<script>[^<]/); // no inline script for the policy to block
      for (const asset of [...scripts, ...styles]) {
        expect(asset).not.toMatch(/^https?:/);
        await t.api().get(new URL(asset, 'http://host/docs/').pathname).expect(200);
      }
    });
  });

  describe('with CORS_ORIGINS', () => {
    const allowed = 'https://app.example';
    const t = useTestApp({
      serviceKey: 'cors-key',
      env: { CORS_ORIGINS: `${allowed},https://admin.example` },
    });

    it('allows the listed origins and exposes the request id and rate-limit headers', async () => {
      const res = await t.api().get('/health').set('Origin', allowed).expect(200);
      expect(res.headers['access-control-allow-origin']).toBe(allowed);
      expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
      expect(res.headers['access-control-expose-headers']).toContain('X-RateLimit-Remaining');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('does not allow other origins', async () => {
      const res = await t.api().get('/health').set('Origin', 'https://evil.example').expect(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('answers a preflight for the proxy without asking for the key', async () => {
      const res = await t
        .api()
        .options('/v1/chat/completions')
        .set('Origin', allowed)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization, content-type, x-service-id');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(allowed);
      expect(res.headers['access-control-allow-methods']).toContain('POST');
      expect(res.headers['access-control-allow-headers']).toMatch(
        /Authorization.*Content-Type.*X-Service-Id/,
      );
    });
  });
});
