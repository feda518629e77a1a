import express, { NextFunction, Request, Response } from 'express';
import { request as httpRequest, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ApiError } from './api-error';
import { jsonBodyParser, jsonDepthExceeds } from './body-parsing';
import { JSON_THREAD_BYTES, JsonParseThread } from './json-parse-thread';

describe('jsonDepthExceeds', () => {
  const nested = (depth: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
    return value;
  };

  it('counts objects and arrays, not scalars', () => {
    expect(jsonDepthExceeds({ a: 1, b: 'x' }, 1)).toBe(false);
    expect(jsonDepthExceeds({ a: { b: 1 } }, 1)).toBe(true);
    expect(jsonDepthExceeds(nested(64), 64)).toBe(false);
    expect(jsonDepthExceeds(nested(65), 64)).toBe(true);
  });

  it('stops at the limit on hostile nesting', () => {
    expect(jsonDepthExceeds(nested(200_000), 64)).toBe(true);
  });

  it('looks into every branch', () => {
    expect(jsonDepthExceeds({ shallow: 1, list: [1, 2, { deep: nested(70) }] }, 64)).toBe(true);
  });
});

/**
 * jsonBodyParser on a real server in front of one route: `parsed` is given each parsed body and says
 * what to answer; an error answers its code (and is told to `refused`).
 */
async function startParsingServer(
  limit: number,
  thread: JsonParseThread,
  on: { parsed: (body: unknown) => unknown; refused?: (code: string) => void },
): Promise<{ server: Server; port: number }> {
  const app = express();
  for (const handler of jsonBodyParser(limit, thread)) app.use(handler);
  app.post('/', (req: Request, res: Response) => {
    res.json(on.parsed(req.body));
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const code = error instanceof ApiError ? error.code : 'not_an_api_error';
    on.refused?.(code);
    res.status(error instanceof ApiError ? error.status : 500).json({ code });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

interface Outcome {
  status: number;
  body: unknown;
}

/**
 * The parser on a real server: bodies of a declared length within the limit are read by jsonBodyParser
 * itself (parsed on the event loop, or all on the parsing thread), chunked or compressed ones by
 * body-parser. The same bytes sent both ways must come out alike.
 */
describe.each([
  ['on the event loop', Infinity],
  ['on the parsing thread', 1],
])('jsonBodyParser, declared bodies parsed %s', (_where, threadFromBytes) => {
  const LIMIT = 1000;
  let server: Server;
  let port: number;
  const seen: Array<{ code: string | null }> = [];
  const thread = new JsonParseThread(threadFromBytes);

  beforeAll(async () => {
    ({ server, port } = await startParsingServer(LIMIT, thread, {
      parsed: (body) => {
        seen.push({ code: null });
        return { parsed: body };
      },
      refused: (code) => seen.push({ code }),
    }));
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await thread.onModuleDestroy();
  });

  /** Sends `parts` (written one by one) with a Content-Length, or chunked, or gzipped. */
  function send(
    parts: Buffer[],
    how: 'declared' | 'chunked' | 'gzip',
    headers: Record<string, string> = {},
  ): Promise<Outcome> {
    const whole = Buffer.concat(parts);
    const framing: Record<string, string> =
      how === 'declared'
        ? { 'content-length': String(whole.length) }
        : how === 'chunked'
          ? { 'transfer-encoding': 'chunked' }
          : { 'content-encoding': 'gzip', 'content-length': String(gzipSync(whole).length) };
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          port,
          method: 'POST',
          path: '/',
          headers: { 'content-type': 'application/json', ...framing, ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
            }),
          );
        },
      );
      req.on('error', reject);
      if (how === 'gzip') req.end(gzipSync(whole));
      else {
        for (const part of parts) req.write(part);
        req.end();
      }
    });
  }

  const bodies: Array<[string, Buffer[]]> = [
    ['an object', [Buffer.from('{"a":1,"b":[true,null,"x"]}')]],
    ['an object with a byte order mark', [Buffer.from('\uFEFF{"a":"b"}')]],
    ['an array', [Buffer.from('[1,2]')]],
    ['empty', [Buffer.alloc(0)]],
    ['white space only', [Buffer.from('  \n\t ')]],
    ['a string', [Buffer.from('"text"')]],
    ['a number after white space', [Buffer.from('  42')]],
    ['malformed', [Buffer.from('{"a":')]],
    ['an object after white space', [Buffer.from('\r\n {"a":"b"}')]],
    [
      'a character cut between two writes',
      [Buffer.from('{"word":"caf\xc3', 'latin1'), Buffer.from('\xa9 😀"}', 'latin1')],
    ],
    ['invalid UTF-8', [Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])]],
    ['a lone byte order mark', [Buffer.from('\uFEFF')]],
    ['a __proto__ key and a lone surrogate', [Buffer.from('{"__proto__":{"x":1},"s":"\\ud800","n":-0}')]],
  ];

  it.each(bodies)('reads %s as body-parser does', async (_label, parts) => {
    const declared = await send(parts, 'declared');
    expect(await send(parts, 'chunked')).toEqual(declared);
    expect(await send(parts, 'gzip')).toEqual(declared);
  });

  it.each(['utf-8', 'UTF-8', '"utf-8"', 'utf8', 'latin1'])(
    'gives a body with charset=%s the same outcome declared as chunked',
    async (charset) => {
      const parts = [Buffer.from('{"a":1}')];
      const headers = { 'content-type': `application/json; charset=${charset}` };
      const declared = await send(parts, 'declared', headers);
      expect(await send(parts, 'chunked', headers)).toEqual(declared);
      expect(declared.status).toBe(charset.toLowerCase().includes('utf-8') ? 200 : 415);
    },
  );

  it('reads a body split across writes, and refuses one over the limit either way with 413', async () => {
    const text = JSON.stringify({ text: 'é'.repeat(200) });
    const parts = [Buffer.from(text).subarray(0, 101), Buffer.from(text).subarray(101)];
    expect(await send(parts, 'declared')).toEqual({ status: 200, body: { parsed: JSON.parse(text) } });
    const large = [Buffer.from(JSON.stringify({ text: 'x'.repeat(LIMIT) }))];
    expect(await send(large, 'declared')).toEqual({ status: 413, body: { code: 'payload_too_large' } });
    expect(await send(large, 'chunked')).toEqual({ status: 413, body: { code: 'payload_too_large' } });
  });

  it('answers a body cut off before its declared length with request_aborted, once', async () => {
    seen.length = 0;
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        port,
        method: 'POST',
        path: '/',
        headers: { 'content-type': 'application/json', 'content-length': '100' },
      });
      req.on('error', () => resolve());
      req.write('{"a":');
      setTimeout(() => req.destroy(), 50);
    });
    const deadline = Date.now() + 2_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    // and nothing more after it
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([{ code: 'request_aborted' }]);
  });
});

describe('jsonBodyParser with a large body', () => {
  const thread = new JsonParseThread();
  let received: unknown;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    ({ server, port } = await startParsingServer(4 * JSON_THREAD_BYTES, thread, {
      parsed: (body) => {
        received = body;
        return {};
      },
    }));
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await thread.onModuleDestroy();
  });

  function post(
    body: Buffer,
    how: 'declared' | 'chunked' | 'gzip' = 'declared',
  ): Promise<{ status: number; body: { length?: number; same?: string; code?: string } }> {
    const sent = how === 'gzip' ? gzipSync(body) : body;
    const framing: Record<string, string> =
      how === 'chunked'
        ? { 'transfer-encoding': 'chunked' }
        : {
            'content-length': String(sent.length),
            ...(how === 'gzip' ? { 'content-encoding': 'gzip' } : {}),
          };
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { port, method: 'POST', path: '/', headers: { 'content-type': 'application/json', ...framing } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
          );
        },
      );
      req.on('error', reject);
      req.end(sent);
    });
  }

  it.each(['declared', 'chunked', 'gzip'] as const)(
    'is parsed off the event loop (%s): JSON.parse never sees it there, and the value is the same',
    async (how) => {
      const content = `\uFEFF "quoted" é😀 \ud800 ${'words and more words '.repeat(JSON_THREAD_BYTES / 20)}`;
      const text = JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] });
      received = undefined;
      const parse = jest.spyOn(JSON, 'parse');
      try {
        const answer = await post(Buffer.from(`\uFEFF${text}`), how);
        expect(answer.status).toBe(200);
        expect(JSON.stringify(received) === text).toBe(true);
        expect(parse.mock.calls.some(([parsed]) => parsed.length >= JSON_THREAD_BYTES)).toBe(false);
      } finally {
        parse.mockRestore();
      }
    },
  );

  it('refuses a large body that is not JSON, or not an object, as a small one', async () => {
    const words = 'x'.repeat(JSON_THREAD_BYTES);
    for (const text of [`{"a":"${words}"`, `"${words}"`, ` ${words}`]) {
      for (const how of ['declared', 'chunked'] as const) {
        expect(await post(Buffer.from(text), how)).toEqual({ status: 400, body: { code: 'invalid_json' } });
      }
    }
  });
});

describe('JsonParseThread', () => {
  const thread = new JsonParseThread(1);
  afterAll(() => thread.onModuleDestroy());

  it('copies bytes that are a view into a larger buffer, and leaves that buffer as it was', async () => {
    // a buffer of its own (Node copies its shared pool's rather than hand it over)
    const whole = new Uint8Array(Buffer.from('xx{"a":1}yy'));
    await expect(thread.parse(whole.subarray(2, 9))).resolves.toEqual({ a: 1 });
    expect(Buffer.from(whole).toString()).toBe('xx{"a":1}yy');
  });
});
