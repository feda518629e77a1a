import { useTestApp } from './support/test-app';

describe('Health and readiness', () => {
  const t = useTestApp();

  it('GET /health answers 200 { status: ok }', async () => {
    const res = await t.api().get('/health').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /ready answers 200 in the Terminus format when the database answers', async () => {
    const res = await t.api().get('/ready').expect(200);
    expect(res.body).toEqual({
      status: 'ok',
      info: { database: { status: 'up' }, turns: { status: 'up', queued: 0 } },
      error: {},
      details: { database: { status: 'up' }, turns: { status: 'up', queued: 0 } },
    });
  });

  it('GET /ready answers 503 when the database is gone, while /health stays 200', async () => {
    await t.dataSource.destroy();
    const res = await t.api().get('/ready').expect(503);
    expect(res.body.status).toBe('error');
    expect(res.body.error.database.status).toBe('down');
    expect(JSON.stringify(res.body)).not.toMatch(/at \w+ \(|node_modules/);
    await t.api().get('/health').expect(200);
  });
});
