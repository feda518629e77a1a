// @database embedded
import { stripVTControlCharacters } from 'node:util';
import { ChildService } from './support/child-service';

/** The readable log of `npm start` (LOG_PRETTY): one short line per request. */
describe('The readable log of the built service', () => {
  afterEach(() => ChildService.stopAll());

  it('writes method, path, status, time and request id on one short line per request', async () => {
    const service = await ChildService.start({ DATA_DIR: 'memory://', LOG_PRETTY: '1', LOG_LEVEL: 'info' });
    await service.ready();
    const health = await fetch(`${service.url}/health`, { headers: { 'x-request-id': 'probe-1' } });
    expect(health.status).toBe(200);
    const root = await fetch(`${service.url}/`, {
      redirect: 'manual',
      headers: { 'x-request-id': 'home-1' },
    });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/admin/');
    await service.stop();

    // without colours, should pino-pretty use them
    const lines = stripVTControlCharacters(service.stdout.join('')).split('\n');
    const requestLines = lines.filter((line) => / req (probe-1|home-1)$/.test(line));
    expect(requestLines).toEqual([
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/health 200 \d+ ms req probe-1$/),
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/ 302 \d+ ms req home-1$/),
    ]);
  });
});
