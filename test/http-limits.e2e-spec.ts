import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expectEnvelope } from './support/factories';
import { useTestApp } from './support/test-app';

/** What a raw connection received until the server closed it (or the wait ran out). */
interface RawAnswer {
  status: number | null;
  headers: string;
  body: string;
  closedAfterMs: number;
}

/**
 * Writes `pieces` on a new connection, keeps it open, and reads until the server closes it or
 * `waitMs` passes.
 */
function rawExchange(port: number, pieces: string[], waitMs: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
      resolve({
        status: status ? Number(status[1]) : null,
        headers: head,
        body: rest.join('\r\n\r\n'),
        closedAfterMs: Date.now() - started,
      });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('close', finish);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET') reject(error);
    });
    socket.on('connect', () => {
      for (const piece of pieces) socket.write(piece);
    });
  });
}

describe('HTTP limits: requests that never arrive whole', () => {
  const t = useTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' } });
  let port: number;

  beforeAll(() => {
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });

  const expectRefusal = (answer: RawAnswer, status: number, code: string, withinMs: number) => {
    expect(answer.status).toBe(status);
    expect(answer.headers.toLowerCase()).toContain('content-type: application/json');
    expectEnvelope(JSON.parse(answer.body), code);
    expect(answer.closedAfterMs).toBeLessThan(withinMs);
  };

  it('answers headers that stop coming with 408 request_timeout in the envelope, within seconds', async () => {
    const answer = await rawExchange(port, ['GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: 1'], 8_000);
    expectRefusal(answer, 408, 'request_timeout', 5_000);
  });

  it('answers a body shorter than its Content-Length with 408 request_timeout in the envelope', async () => {
    const head =
      'POST /api/profiles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
    const answer = await rawExchange(port, [head, '{"externalId":'], 8_000);
    expectRefusal(answer, 408, 'request_timeout', 6_000);
  });

  it('answers headers over the size limit with 431 in the envelope', async () => {
    const answer = await rawExchange(
      port,
      [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
      8_000,
    );
    expectRefusal(answer, 431, 'request_header_fields_too_large', 5_000);
  });

  it('answers what is not HTTP with 400 malformed_request in the envelope', async () => {
    const answer = await rawExchange(port, ['HELLO THERE\r\n\r\n'], 8_000);
    expectRefusal(answer, 400, 'malformed_request', 5_000);
  });

  it('still serves a request whose body comes slowly but within the limit', async () => {
    const body = '{"externalId":"slow-but-fine"}';
    const head = `POST /api/profiles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.write(head + body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.write(body.slice(10));
    await new Promise((resolve) => socket.on('close', resolve));
    expect(Buffer.concat(received).toString('utf8')).toMatch(/^HTTP\/1\.1 201/);
  });
});
