import type { INestApplication } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { GracefulShutdown } from './graceful-shutdown';

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/** Raw HTTP/1.1 on one socket, so that a second request can follow the first on the same connection. */
function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
}

describe('GracefulShutdown', () => {
  let server: Server;
  let socket: Socket | undefined;
  const listenersBefore = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));

  afterEach(() => {
    socket?.destroy();
    server?.closeAllConnections();
    // the shutdown registered its signal handlers on this process: only the test's own go
    for (const signal of SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (!listenersBefore.get(signal)!.includes(listener)) process.removeListener(signal, listener);
      }
    }
  });

  it('drains a request already answered when it reached its listener, on a connection kept open', async () => {
    let releaseSlow: (() => void) | undefined;
    let refused = 0;
    server = createServer((req, res) => {
      // the application's listener, which may answer at once (a body refused before it is read)
      if (req.url === '/slow') releaseSlow = () => res.end('slow');
      else {
        refused++;
        res.writeHead(415).end('refused');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const exit = jest.fn();
    const app = {
      getHttpServer: () => server,
      close: () => Promise.resolve(),
    } as unknown as INestApplication;
    const shutdown = new GracefulShutdown(app, 5_000, exit);
    shutdown.install();
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const { port } = server.address() as AddressInfo;
      socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      const socketClosed = new Promise((resolve) => socket!.once('close', resolve));
      socket.write(get('/slow'));
      await waitFor(() => releaseSlow !== undefined);
      const stopping = (shutdown as unknown as { shutdown(signal: string): Promise<void> }).shutdown(
        'SIGTERM',
      );
      // a second request on the live connection, while the service drains
      socket.write(get('/refused'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      releaseSlow!();
      await stopping;
      await socketClosed;
      expect(refused).toBe(1);
      expect(uncaught).toEqual([]);
      expect(exit).toHaveBeenCalledWith(0);
      // the request in flight got its answer; the one behind it on the closing connection none, and
      // refusing it threw nothing
      expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\nConnection: close\r\n[\s\S]*\r\n\r\nslow$/);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
