import express, { Request, Response } from 'express';
import { request as httpRequest, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ClientConnection } from './client-connection';
import { EventStreamWriter } from './event-stream-writer';

/** Counts the sends a socket makes (each one system call): `_write` for one buffer, `_writev` for several. */
function countSends(socket: Socket): { count: number } {
  const sends = { count: 0 };
  const target = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  for (const method of ['_write', '_writev'] as const) {
    const original = target[method].bind(socket);
    target[method] = (...args: unknown[]) => {
      sends.count++;
      return original(...args);
    };
  }
  return sends;
}

describe('EventStreamWriter', () => {
  let server: Server;
  let port: number;
  let sends: { count: number };
  let handle: (writer: EventStreamWriter) => Promise<void>;
  let timing = { idleTimeoutMs: 1000, keepAliveMs: 0 };

  beforeAll(async () => {
    const app = express();
    app.get('/', (req: Request, res: Response) => {
      sends = countSends(req.socket);
      const writer = new EventStreamWriter(new ClientConnection(req, res), 200, {}, timing);
      void handle(writer);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function fetchStream(): Promise<{ headers: Record<string, unknown>; body: string }> {
    return new Promise((resolve, reject) => {
      httpRequest({ port, path: '/' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ headers: res.headers, body }));
      })
        .on('error', reject)
        .end();
    });
  }

  it('sends the headers and the events written in one turn together, and each later turn once', async () => {
    handle = async (writer) => {
      await writer.write('data: one\n\n');
      await writer.write('data: two\n\n');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await writer.write('data: three\n\n');
      await writer.write('data: four\n\n');
      await new Promise((resolve) => setTimeout(resolve, 20));
      writer.end('data: [DONE]\n\n');
    };
    const { headers, body } = await fetchStream();
    expect(headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(body).toBe('data: one\n\ndata: two\n\ndata: three\n\ndata: four\n\ndata: [DONE]\n\n');
    expect(sends.count).toBe(3);
  });

  it('sends the headers in the turn they were written even when no event follows soon', async () => {
    let seeHeaders = () => {};
    const headersSeen = new Promise<void>((resolve) => (seeHeaders = resolve));
    let seenBeforeEnd = false;
    handle = async (writer) => {
      // the stream ends only once the client has its headers, or after two seconds without them
      let giveUp: NodeJS.Timeout | undefined;
      seenBeforeEnd = await Promise.race([
        headersSeen.then(() => true),
        new Promise<boolean>((resolve) => (giveUp = setTimeout(() => resolve(false), 2_000))),
      ]);
      // a pending timer would hold Jest's worker open after its last file
      clearTimeout(giveUp);
      writer.end('data: late\n\n');
    };
    const body = await new Promise<string>((resolve, reject) => {
      httpRequest({ port, path: '/' }, (res) => {
        seeHeaders();
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end();
    });
    expect(body).toBe('data: late\n\n');
    expect(seenBeforeEnd).toBe(true);
  });

  it('sends keep-alive comments to every quiet stream open at once', async () => {
    timing = { idleTimeoutMs: 1000, keepAliveMs: 40 };
    try {
      const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      handle = async (writer) => {
        await writer.write('data: start\n\n');
        await pause(200);
        writer.end('data: [DONE]\n\n');
      };
      const quiet = await Promise.all([fetchStream(), fetchStream(), fetchStream()]);
      for (const { body } of quiet) {
        expect(body).toMatch(/^data: start\n\n(: keep-alive\n\n)+data: \[DONE\]\n\n$/);
      }
    } finally {
      timing = { idleTimeoutMs: 1000, keepAliveMs: 0 };
    }
  });
});
