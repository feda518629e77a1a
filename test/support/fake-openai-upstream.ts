import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  lastResponsesUserText,
  responseBody,
  responseStream,
  type FakeResponseScript,
} from './fake-responses-upstream';

// ---------------------------------------------------------------------------------------------------------------
// Shared harness: a real HTTP server on 127.0.0.1 that records every request. Also used by the Anthropic fake.
// ---------------------------------------------------------------------------------------------------------------

/** Bodies are whatever the client sent; tests poke into them freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LooseJson = any;

export interface RecordedRequest {
  method: string;
  /** Path including any query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined when the body was empty or not JSON. */
  body: LooseJson;
  /** Client-side port of the TCP connection; equal ports across requests mean a reused keep-alive socket. */
  remotePort: number | undefined;
  /** True once the server finished writing the response. */
  completed: boolean;
  /** True when the connection closed before the response was complete and the fake did not cut it itself. */
  closedByClient: boolean;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  record: RecordedRequest;
  /** Runs `fn` after `ms` unless the exchange has closed meanwhile. */
  later(ms: number, fn: () => void): void;
  /** Ends the TCP connection abruptly, without the client seeing a complete response. */
  cutConnection(): void;
  isClosed(): boolean;
}

export interface RecordingServer {
  /** Origin, e.g. `http://127.0.0.1:54321`. */
  origin: string;
  requests: RecordedRequest[];
  inFlight: () => number;
  waitForRequests: (count: number, timeoutMs?: number) => Promise<void>;
  /** Resolves once the request with this index was closed by the client. */
  waitForClientClose: (index: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

export async function startRecordingServer(handle: (exchange: Exchange) => void): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();
  let inFlight = 0;
  const notify = (): void => waiters.forEach((wake) => wake());

  const server = createServer((req, res) => {
    inFlight++;
    const record: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      rawBody: '',
      body: undefined,
      remotePort: req.socket.remotePort,
      completed: false,
      closedByClient: false,
    };
    const ownTimers = new Set<NodeJS.Timeout>();
    let closed = false;
    let cutByServer = false;
    res.on('finish', () => {
      record.completed = true;
    });
    res.on('close', () => {
      closed = true;
      inFlight--;
      if (!record.completed && !cutByServer) record.closedByClient = true;
      ownTimers.forEach((timer) => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      notify();
    });

    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      record.rawBody = Buffer.concat(chunks).toString('utf8');
      record.body = parseJson(record.rawBody);
      requests.push(record);
      notify();
      handle({
        req,
        res,
        record,
        later(ms, fn) {
          if (closed) return;
          const timer = setTimeout(() => {
            ownTimers.delete(timer);
            timers.delete(timer);
            if (!closed) fn();
          }, ms);
          ownTimers.add(timer);
          timers.add(timer);
        },
        cutConnection() {
          cutByServer = true;
          req.socket.destroy();
        },
        isClosed: () => closed,
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const waitUntil = (condition: () => boolean, what: string, timeoutMs: number): Promise<void> => {
    if (condition()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
    });
  };

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    inFlight: () => inFlight,
    waitForRequests: (count, timeoutMs = 5_000) =>
      waitUntil(() => requests.length >= count, `${count} request(s)`, timeoutMs),
    waitForClientClose: (index, timeoutMs = 5_000) =>
      waitUntil(
        () => requests[index]?.closedByClient === true,
        `client close of request ${index}`,
        timeoutMs,
      ),
    close: async () => {
      timers.forEach((timer) => clearTimeout(timer));
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Pause before cutting a socket after writes, so the client has received them rather than losing them in a buffer. */
export const AFTER_FLUSH_MS = 10;

export function parseJson(text: string): LooseJson {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A whole answer whose body is written as it is (JSON or not), with `application/json` unless told. */
export interface RawBodyScript {
  kind: 'raw';
  status?: number;
  body: string;
  contentType?: string;
}

export function sendRaw(res: ServerResponse, script: RawBodyScript, headers: Record<string, string>): void {
  res.writeHead(script.status ?? 200, {
    'content-type': script.contentType ?? 'application/json',
    'content-length': Buffer.byteLength(script.body),
    ...headers,
  });
  res.end(script.body);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

/** Writes `pieces` one by one, `delayMs` apart (0 = same tick), then calls `after` if the exchange is still open. */
export function writePaced(exchange: Exchange, pieces: string[], delayMs: number, after: () => void): void {
  let next = 0;
  const step = (): void => {
    if (exchange.isClosed()) return;
    if (next >= pieces.length) {
      after();
      return;
    }
    exchange.res.write(pieces[next++]);
    if (delayMs > 0) exchange.later(delayMs, step);
    else step();
  };
  step();
}

export function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const content: unknown = messages[i]?.role === 'user' ? messages[i].content : undefined;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content
        .filter((part: LooseJson) => part?.type === 'text' && typeof part.text === 'string')
        .map((part: LooseJson) => part.text as string)
        .join(' ');
    }
  }
  return '';
}

/** A deterministic token estimate: whitespace-separated words. */
export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

// ---------------------------------------------------------------------------------------------------------------
// Fake OpenAI upstream
// ---------------------------------------------------------------------------------------------------------------

export type FakeOpenAIScript =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Accepts the request and never sends headers. */
  | { kind: 'hang' }
  /**
   * A proper `chat.completion.chunk` stream: role chunk, one chunk per content piece, finish chunk, a usage chunk
   * when the request asked for it, `[DONE]`. `then` changes the ending: 'disconnect' cuts the socket after the
   * pieces, 'malformed' inserts an unparsable event before the normal ending, 'hang' stops writing but stays open.
   */
  | {
      kind: 'stream';
      chunks: string[];
      delayMs?: number;
      then?: 'done' | 'disconnect' | 'malformed' | 'hang';
      finishReason?: string;
    }
  /** Entries are written verbatim (include your own `\n\n`), `delayMs` apart, then the response ends. */
  | { kind: 'raw-sse'; lines: string[]; delayMs?: number }
  /** A whole answer whose body is written as it is (JSON or not), with `application/json` unless told. */
  | RawBodyScript
  /** Destroys the socket before any response byte. */
  | { kind: 'disconnect' }
  /** A Responses API answer (for `POST /v1/responses`; see fake-responses-upstream.ts). */
  | FakeResponseScript;

export interface FakeOpenAIOptions {
  /** When set, requests without `Authorization: Bearer <key>` get a 401. */
  requireApiKey?: string;
  models?: string[];
  embeddingDimensions?: number;
  /**
   * The model behind `/v1/embeddings`; by default a hash of the text (equal texts, equal vectors). When
   * it returns null for an input the whole request gets a 400, as providers answer one bad input.
   */
  embed?: (text: string, dimensions: number) => number[] | null;
}

export interface FakeOpenAI {
  /** Base URL ending in `/v1`. */
  url: string;
  requests: RecordedRequest[];
  /** Queues responses for `POST /v1/chat/completions`, first in first out. */
  script(...responses: FakeOpenAIScript[]): void;
  /** Queues responses for `POST /v1/responses`, first in first out. */
  scriptResponses(...responses: FakeOpenAIScript[]): void;
  /** Queues responses for another route, e.g. `scriptFor('/v1/embeddings', {kind:'error', status: 500})`. */
  scriptFor(path: string, ...responses: FakeOpenAIScript[]): void;
  /** Clears recorded requests and queued scripts. */
  reset(): void;
  inFlight: () => number;
  waitForRequests: (count: number, timeoutMs?: number) => Promise<void>;
  waitForClientClose: (index: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

export const FAKE_CREATED = 1_700_000_000;
const CHAT_PATH = '/v1/chat/completions';
const RESPONSES_PATH = '/v1/responses';

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queues = new Map<string, FakeOpenAIScript[]>();
  const models = options.models ?? ['fake-model', 'fake-model-mini'];
  let sequence = 0;

  const server = await startRecordingServer((exchange) => {
    const { record } = exchange;
    const route = record.path.split('?', 1)[0];
    const requestNumber = ++sequence;
    const idHeaders = { 'x-request-id': `req_fake_${requestNumber}`, 'openai-processing-ms': '1' };

    if (options.requireApiKey && record.headers.authorization !== `Bearer ${options.requireApiKey}`) {
      sendJson(
        exchange.res,
        401,
        openAIError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
      );
      return;
    }
    const scripted = queues.get(route)?.shift();
    if (scripted) {
      runScript(exchange, scripted, requestNumber, idHeaders);
      return;
    }
    if (record.method === 'POST' && route === CHAT_PATH) {
      const reply = `echo: ${lastUserText(record.body?.messages)}`;
      if (record.body?.stream === true) {
        runScript(exchange, { kind: 'stream', chunks: splitIntoPieces(reply) }, requestNumber, idHeaders);
      } else {
        sendJson(exchange.res, 200, completionBody(record.body, reply, requestNumber), idHeaders);
      }
    } else if (record.method === 'POST' && route === RESPONSES_PATH) {
      const reply = `echo: ${lastResponsesUserText(record.body?.input)}`;
      runScript(exchange, { kind: 'response', text: splitIntoPieces(reply) }, requestNumber, idHeaders);
    } else if (record.method === 'GET' && route === '/v1/models') {
      sendJson(exchange.res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: FAKE_CREATED, owned_by: 'fake' })),
      });
    } else if (record.method === 'POST' && route === '/v1/embeddings') {
      const body = embeddingsBody(
        record.body,
        options.embeddingDimensions ?? 8,
        options.embed ?? fakeEmbedding,
      );
      if (body === null) {
        sendJson(exchange.res, 400, openAIError('input rejected by the model', 'invalid_request_error'));
      } else {
        sendJson(exchange.res, 200, body, idHeaders);
      }
    } else {
      sendJson(
        exchange.res,
        404,
        openAIError(`Unknown route ${record.method} ${route}`, 'invalid_request_error'),
      );
    }
  });

  return {
    url: `${server.origin}/v1`,
    requests: server.requests,
    script: (...responses) => enqueue(queues, CHAT_PATH, responses),
    scriptResponses: (...responses) => enqueue(queues, RESPONSES_PATH, responses),
    scriptFor: (path, ...responses) => enqueue(queues, path, responses),
    reset() {
      server.requests.length = 0;
      queues.clear();
    },
    inFlight: server.inFlight,
    waitForRequests: server.waitForRequests,
    waitForClientClose: server.waitForClientClose,
    close: server.close,
  };
}

export function enqueue<T>(queues: Map<string, T[]>, path: string, items: T[]): void {
  const queue = queues.get(path) ?? [];
  queue.push(...items);
  queues.set(path, queue);
}

function runScript(
  exchange: Exchange,
  script: FakeOpenAIScript,
  requestNumber: number,
  idHeaders: Record<string, string>,
): void {
  const { res } = exchange;
  switch (script.kind) {
    case 'raw':
      sendRaw(res, script, idHeaders);
      return;
    case 'json':
      sendJson(res, script.status ?? 200, script.body, { ...idHeaders, ...script.headers });
      return;
    case 'error':
      sendJson(
        res,
        script.status,
        script.body ?? openAIError(`Scripted failure with status ${script.status}`, errorType(script.status)),
        { ...idHeaders, ...script.headers },
      );
      return;
    case 'hang':
      return;
    case 'disconnect':
      exchange.cutConnection();
      return;
    case 'raw-sse':
      res.writeHead(200, sseHeaders(idHeaders));
      writePaced(exchange, script.lines, script.delayMs ?? 0, () => res.end());
      return;
    case 'stream':
      streamCompletion(exchange, script, requestNumber, idHeaders);
      return;
    case 'response':
      answerResponse(exchange, script, requestNumber, idHeaders);
      return;
  }
}

function answerResponse(
  exchange: Exchange,
  script: FakeResponseScript,
  requestNumber: number,
  idHeaders: Record<string, string>,
): void {
  const body = exchange.record.body;
  const usage = script.usage ?? {
    input_tokens: countWords(JSON.stringify(body?.input ?? '')),
    output_tokens: countWords((script.text ?? []).join('')) + (script.functionCalls?.length ?? 0),
  };
  if (body?.stream !== true) {
    sendJson(exchange.res, 200, responseBody(body, script, requestNumber, usage), idHeaders);
    return;
  }
  const { opening, ending } = responseStream(body, script, requestNumber, usage);
  exchange.res.writeHead(200, sseHeaders(idHeaders));
  const delayMs = script.delayMs ?? 0;
  writePaced(exchange, opening, delayMs, () => {
    if (script.then === 'hang') return;
    if (script.then === 'disconnect') exchange.later(AFTER_FLUSH_MS, () => exchange.cutConnection());
    else writePaced(exchange, ending, delayMs, () => exchange.res.end());
  });
}

function streamCompletion(
  exchange: Exchange,
  script: Extract<FakeOpenAIScript, { kind: 'stream' }>,
  requestNumber: number,
  idHeaders: Record<string, string>,
): void {
  const body = exchange.record.body;
  const base = {
    id: `chatcmpl-fake-${requestNumber}`,
    object: 'chat.completion.chunk',
    created: FAKE_CREATED,
    model: typeof body?.model === 'string' ? body.model : 'fake-model',
  };
  const includeUsage = body?.stream_options?.include_usage === true;
  const event = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ ...base, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`;
  const choice = (delta: unknown, finishReason: string | null = null): unknown => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });

  const opening = [
    event([choice({ role: 'assistant', content: '' })]),
    ...script.chunks.map((c) => event([choice({ content: c })])),
  ];
  const promptTokens = countWords(JSON.stringify(body?.messages ?? []));
  const completionTokens = countWords(script.chunks.join(''));
  const ending = [event([choice({}, script.finishReason ?? 'stop')])];
  if (includeUsage) {
    ending.push(
      event([], {
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      }),
    );
  }
  ending.push('data: [DONE]\n\n');

  exchange.res.writeHead(200, sseHeaders(idHeaders));
  const delayMs = script.delayMs ?? 0;
  writePaced(exchange, opening, delayMs, () => {
    switch (script.then ?? 'done') {
      case 'disconnect':
        exchange.later(AFTER_FLUSH_MS, () => exchange.cutConnection());
        return;
      case 'hang':
        return;
      case 'malformed':
        writePaced(exchange, ['data: {"id": "broken", "choices": [\n\n', ...ending], delayMs, () =>
          exchange.res.end(),
        );
        return;
      case 'done':
        writePaced(exchange, ending, delayMs, () => exchange.res.end());
        return;
    }
  });
}

export function sseHeaders(extra: Record<string, string>): Record<string, string> {
  return { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...extra };
}

function splitIntoPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

function completionBody(body: LooseJson, content: string, requestNumber: number): unknown {
  const promptTokens = countWords(JSON.stringify(body?.messages ?? []));
  const completionTokens = countWords(content);
  return {
    id: `chatcmpl-fake-${requestNumber}`,
    object: 'chat.completion',
    created: FAKE_CREATED,
    model: typeof body?.model === 'string' ? body.model : 'fake-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

/** A unit vector derived from SHA-256 of the text, so equal texts embed equally and different texts differ. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && values.length < dimensions; i += 2) {
      values.push(digest.readUInt16BE(i) / 32_767.5 - 1);
    }
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

function embeddingsBody(
  body: LooseJson,
  defaultDimensions: number,
  embed: (text: string, dimensions: number) => number[] | null,
): unknown {
  const inputs: string[] = Array.isArray(body?.input) ? body.input.map(String) : [String(body?.input ?? '')];
  const dimensions = typeof body?.dimensions === 'number' ? (body.dimensions as number) : defaultDimensions;
  const asBase64 = body?.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, input) => sum + countWords(input), 0);
  const vectors = inputs.map((input) => embed(input, dimensions));
  if (vectors.some((vector) => vector === null)) return null;
  return {
    object: 'list',
    data: inputs.map((input, index) => {
      const vector = vectors[index]!;
      // The OpenAI SDK asks for base64 (little-endian float32) unless told otherwise.
      const embedding = asBase64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    }),
    model: typeof body?.model === 'string' ? (body.model as string) : 'fake-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

export function openAIError(message: string, type: string, code: string | null = null): unknown {
  return { error: { message, type, param: null, code } };
}

function errorType(status: number): string {
  if (status === 401) return 'invalid_request_error';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}
