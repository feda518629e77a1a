import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig } from '../config/app-config';
import { requestLogger } from '../common/request-logger';
import { createLoggers, requestLog } from './http-logger';
import { REDACTED } from './log-redaction';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const lines = () =>
    written
      .join('')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines };
}

describe('request logging', () => {
  const config = loadConfig({ LOG_LEVEL: 'info' });

  it('censors secrets and conversation text in what code logs, at the top level and one level down', () => {
    const { stream, lines } = capture();
    const { root } = createLoggers(config, { stream });
    const logged = {
      headers: { authorization: 'Bearer top-secret', accept: 'json' },
      apiKey: 'key-1',
      call: { headers: { 'x-api-key': 'key-2' }, body: { messages: ['hello'], model: 'm' }, token: 'key-3' },
    };
    root.child({ requestId: 'r1' }).info(logged, 'by hand');
    const [line] = lines();
    expect(line).toMatchObject({
      requestId: 'r1',
      headers: { authorization: REDACTED, accept: 'json' },
      apiKey: REDACTED,
      call: { headers: { 'x-api-key': REDACTED }, body: { messages: REDACTED, model: 'm' }, token: REDACTED },
      msg: 'by hand',
    });
    expect(logged.headers.authorization).toBe('Bearer top-secret'); // the caller's object is left alone
  });

  it('writes one line per request with its id, and the lines logged while handling it carry the id', async () => {
    const { stream, lines } = capture();
    const { root, requestLines } = createLoggers(config, { stream });
    const middleware = requestLog(root, requestLines);
    const server: Server = createServer((req, res) => {
      middleware(req, res, () => {
        requestLogger(req, 'Handler').log({ apiKey: 'hidden', step: 'handling' });
        res.statusCode = 201;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/api/x?y=1`, {
        headers: { 'x-request-id': 'req-42', authorization: 'Bearer never-logged' },
      });
      await res.text();
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const [handling, line] = lines();
    expect(handling).toMatchObject({
      requestId: 'req-42',
      context: 'Handler',
      apiKey: REDACTED,
      step: 'handling',
    });
    expect(line).toMatchObject({
      level: 'info',
      requestId: 'req-42',
      req: { method: 'GET', url: '/api/x?y=1' },
      res: { statusCode: 201 },
      completed: true,
      msg: 'request completed',
    });
    expect(JSON.stringify(lines())).not.toContain('never-logged');
  });

  it('makes a request its own logger only when its handling logs, and once', async () => {
    const { stream, lines } = capture();
    const { root, requestLines } = createLoggers(config, { stream });
    const child = jest.spyOn(root, 'child');
    const middleware = requestLog(root, requestLines);
    const server: Server = createServer((req, res) => {
      middleware(req, res, () => {
        if (req.url === '/logs') {
          requestLogger(req, 'Handler').log('handling');
          requestLogger(req, 'Handler').log('handled');
        }
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await (await fetch(`http://127.0.0.1:${port}/quiet`)).text();
      expect(child).not.toHaveBeenCalled();
      await (await fetch(`http://127.0.0.1:${port}/logs`, { headers: { 'x-request-id': 'req-7' } })).text();
      expect(child).toHaveBeenCalledTimes(1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(lines().map((line) => [line.requestId ?? null, line.msg])).toEqual([
      [expect.any(String), 'request completed'],
      ['req-7', 'handling'],
      ['req-7', 'handled'],
      ['req-7', 'request completed'],
    ]);
  });

  it('writes one line, not completed, for a response whose client hung up before it was sent', async () => {
    const { stream, lines } = capture();
    const { root, requestLines } = createLoggers(config, { stream });
    const middleware = requestLog(root, requestLines);
    let handled!: () => void;
    const handling = new Promise<void>((resolve) => (handled = resolve));
    const server: Server = createServer((req, res) => {
      middleware(req, res, () => {
        res.write('part of it');
        handled();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const hangUp = new AbortController();
      const answer = fetch(`http://127.0.0.1:${port}/slow`, { signal: hangUp.signal });
      await handling;
      hangUp.abort();
      await answer.then((res) => res.text()).catch(() => undefined);
      for (let waited = 0; lines().length === 0 && waited < 2000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    expect(lines()).toEqual([
      expect.objectContaining({ req: expect.objectContaining({ url: '/slow' }), completed: false }),
    ]);
  });
});
