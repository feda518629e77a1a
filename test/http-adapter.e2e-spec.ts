import type { Express } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { useTestApp } from './support/test-app';

/**
 * The server creates requests and responses as Express's own (ExpressHttpAdapter): neither Express
 * nor the proxy's front door has to change an object's prototype while it serves it.
 */
describe('Requests and responses created as Express’s', () => {
  const t = useTestApp({ upstream: 'openai' });
  const seen: Array<{ path: string; created: boolean; kept: boolean }> = [];

  beforeAll(() => {
    const express: Express = t.app.getHttpAdapter().getInstance();
    const server = t.app.getHttpServer();
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const created =
        Object.getPrototypeOf(req) === express.request && Object.getPrototypeOf(res) === express.response;
      res.on('finish', () => {
        const kept =
          Object.getPrototypeOf(req) === express.request && Object.getPrototypeOf(res) === express.response;
        seen.push({ path: req.url ?? '', created, kept });
      });
    });
  });

  it('on the proxy’s front door and on the routes Express serves, with Express’s methods working', async () => {
    await t
      .api()
      .post('/v1/chat/completions')
      .set('x-service-id', 'adapter-user')
      .send({ model: 'm', messages: [{ role: 'user', content: 'Hello there' }] })
      .expect(200);
    const created = await t.admin().post('/api/profiles').send({ externalId: 'adapter-user-2' }).expect(201);
    expect(created.body.profile.externalId).toBe('adapter-user-2');
    await t.api().get('/health').expect(200);
    await t.api().get('/no-such-route').expect(404);
    expect(seen.map(({ path }) => path)).toEqual([
      '/v1/chat/completions',
      '/api/profiles',
      '/health',
      '/no-such-route',
    ]);
    for (const entry of seen) expect(entry).toMatchObject({ created: true, kept: true });
  });
});
