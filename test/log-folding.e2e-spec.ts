// @database postgres
import { ChildService, emptyServerDatabase } from './support/child-service';
import { TcpGate } from './support/tcp-gate';

/**
 * The built service on the PostgreSQL server behind a loopback gate that then refuses every
 * connection: each request is refused with 503, and its warnings are folded (one line per cause per
 * interval, then a count) instead of two per request.
 */
describe('warnings during a database outage', () => {
  let gate: TcpGate;
  let service: ChildService | undefined;

  beforeAll(async () => {
    await emptyServerDatabase();
    const server = new URL(process.env.DATABASE_URL!);
    gate = await TcpGate.start(Number(server.port || 5432), server.hostname);
  });

  afterAll(async () => {
    await service?.stop();
    await gate.close();
  });

  it('folds the warnings of refused requests into one line per cause', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.hostname = '127.0.0.1';
    url.port = String(gate.port);
    service = await ChildService.start({
      DATABASE_URL: url.toString(),
      DATABASE_ACQUIRE_TIMEOUT_MS: '500',
      LOG_LEVEL: 'warn',
    });
    await service.ready();
    gate.refuse();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await fetch(`${service.url}/api/profiles`)).status);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThanOrEqual(35);
    const warnings = service.logLines().filter((line) => line.level === 'warn');
    // two causes at most per kind (the lost connections, then the refused ones), never one per request
    expect(warnings.length).toBeLessThanOrEqual(8);
    expect(warnings.some((line) => /database unavailable/.test(line.msg))).toBe(true);
  });
});
