import {
  AFTER_FLUSH_MS,
  countWords,
  enqueue,
  lastUserText,
  sendJson,
  sendRaw,
  sseHeaders,
  startRecordingServer,
  writePaced,
  type Exchange,
  type RawBodyScript,
  type RecordedRequest,
} from './fake-openai-upstream';

export interface FakeToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** How the streamed `input_json_delta` fragments split the JSON; defaults to two halves. */
  jsonPieces?: string[];
}

export type FakeAnthropicScript =
  /**
   * An assistant message, answered as JSON or as an SSE event stream depending on the request's `stream` flag.
   * `then` changes a streamed ending: 'disconnect' cuts the socket before message_delta, 'hang' stops writing,
   * 'error' sends an `error` event (overloaded_error) instead of finishing.
   */
  | {
      kind: 'message';
      text?: string[];
      toolUses?: FakeToolUse[];
      stopReason?: string;
      usage?: { input_tokens: number; output_tokens: number };
      delayMs?: number;
      then?: 'done' | 'disconnect' | 'hang' | 'error';
    }
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'error'; status: number; errorType?: string; message?: string; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'disconnect' }
  | { kind: 'raw-sse'; lines: string[]; delayMs?: number }
  | RawBodyScript;

export interface FakeAnthropicOptions {
  /** When set, requests without a matching `x-api-key` get a 401. */
  requireApiKey?: string;
  models?: Array<{ id: string; display_name: string; created_at: string }>;
}

export interface FakeAnthropic {
  /** Base URL ending in `/v1`. */
  url: string;
  requests: RecordedRequest[];
  /** Queues responses for `POST /v1/messages`, first in first out. */
  script(...responses: FakeAnthropicScript[]): void;
  reset(): void;
  inFlight: () => number;
  waitForRequests: (count: number, timeoutMs?: number) => Promise<void>;
  waitForClientClose: (index: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

const MESSAGES_PATH = '/v1/messages';
const DEFAULT_MODELS = [
  { id: 'claude-fake-large', display_name: 'Claude Fake Large', created_at: '2025-02-19T00:00:00Z' },
  { id: 'claude-fake-small', display_name: 'Claude Fake Small', created_at: '2024-10-22T00:00:00Z' },
];

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const queues = new Map<string, FakeAnthropicScript[]>();
  const models = options.models ?? DEFAULT_MODELS;
  let sequence = 0;

  const server = await startRecordingServer((exchange) => {
    const { record, res } = exchange;
    const route = record.path.split('?', 1)[0];
    const requestNumber = ++sequence;
    const idHeaders = { 'request-id': `req_fake_${requestNumber}` };

    if (!record.headers['anthropic-version']) {
      sendJson(res, 400, anthropicError('invalid_request_error', 'anthropic-version: header is required'));
      return;
    }
    if (options.requireApiKey && record.headers['x-api-key'] !== options.requireApiKey) {
      sendJson(res, 401, anthropicError('authentication_error', 'invalid x-api-key'), idHeaders);
      return;
    }
    if (record.method === 'POST' && route === MESSAGES_PATH) {
      const script = queues.get(MESSAGES_PATH)?.shift() ?? {
        kind: 'message',
        text: [`echo: ${lastUserText(record.body?.messages)}`],
      };
      runScript(exchange, script, requestNumber, idHeaders);
    } else if (record.method === 'GET' && route === '/v1/models') {
      sendJson(res, 200, {
        data: models.map((model) => ({ type: 'model', ...model })),
        has_more: false,
        first_id: models[0]?.id ?? null,
        last_id: models.at(-1)?.id ?? null,
      });
    } else {
      sendJson(res, 404, anthropicError('not_found_error', `Unknown route ${record.method} ${route}`));
    }
  });

  return {
    url: `${server.origin}/v1`,
    requests: server.requests,
    script: (...responses) => enqueue(queues, MESSAGES_PATH, responses),
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

export function anthropicError(type: string, message: string): unknown {
  return { type: 'error', error: { type, message } };
}

function runScript(
  exchange: Exchange,
  script: FakeAnthropicScript,
  requestNumber: number,
  idHeaders: Record<string, string>,
): void {
  const { res } = exchange;
  switch (script.kind) {
    case 'json':
      sendJson(res, script.status ?? 200, script.body, { ...idHeaders, ...script.headers });
      return;
    case 'error':
      sendJson(
        res,
        script.status,
        anthropicError(
          script.errorType ?? 'api_error',
          script.message ?? `Scripted failure ${script.status}`,
        ),
        { ...idHeaders, ...script.headers },
      );
      return;
    case 'hang':
      return;
    case 'disconnect':
      exchange.cutConnection();
      return;
    case 'raw':
      sendRaw(res, script, idHeaders);
      return;
    case 'raw-sse':
      res.writeHead(200, sseHeaders(idHeaders));
      writePaced(exchange, script.lines, script.delayMs ?? 0, () => res.end());
      return;
    case 'message':
      if (exchange.record.body?.stream === true) streamMessage(exchange, script, requestNumber, idHeaders);
      else sendJson(res, 200, messageBody(exchange.record, script, requestNumber), idHeaders);
      return;
  }
}

type MessageScript = Extract<FakeAnthropicScript, { kind: 'message' }>;

function messageUsage(
  record: RecordedRequest,
  script: MessageScript,
): { input_tokens: number; output_tokens: number } {
  return (
    script.usage ?? {
      input_tokens: countWords(JSON.stringify(record.body?.messages ?? [])),
      output_tokens: countWords((script.text ?? []).join('')) + (script.toolUses?.length ?? 0),
    }
  );
}

function stopReasonOf(script: MessageScript): string {
  return script.stopReason ?? (script.toolUses?.length ? 'tool_use' : 'end_turn');
}

function modelOf(record: RecordedRequest): string {
  return typeof record.body?.model === 'string' ? (record.body.model as string) : 'claude-fake-large';
}

function messageBody(record: RecordedRequest, script: MessageScript, requestNumber: number): unknown {
  const text = (script.text ?? []).join('');
  const content: unknown[] = text ? [{ type: 'text', text }] : [];
  for (const tool of script.toolUses ?? []) {
    content.push({ type: 'tool_use', id: tool.id, name: tool.name, input: tool.input });
  }
  return {
    id: `msg_fake_${requestNumber}`,
    type: 'message',
    role: 'assistant',
    model: modelOf(record),
    content,
    stop_reason: stopReasonOf(script),
    stop_sequence: null,
    usage: messageUsage(record, script),
  };
}

function sseEvent(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

function streamMessage(
  exchange: Exchange,
  script: MessageScript,
  requestNumber: number,
  idHeaders: Record<string, string>,
): void {
  const usage = messageUsage(exchange.record, script);
  const events: string[] = [
    sseEvent('message_start', {
      message: {
        id: `msg_fake_${requestNumber}`,
        type: 'message',
        role: 'assistant',
        model: modelOf(exchange.record),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    }),
  ];
  let blockIndex = 0;
  if (script.text?.length) {
    events.push(
      sseEvent('content_block_start', { index: blockIndex, content_block: { type: 'text', text: '' } }),
    );
    events.push(sseEvent('ping', {}));
    for (const text of script.text) {
      events.push(
        sseEvent('content_block_delta', { index: blockIndex, delta: { type: 'text_delta', text } }),
      );
    }
    events.push(sseEvent('content_block_stop', { index: blockIndex }));
    blockIndex++;
  }
  for (const tool of script.toolUses ?? []) {
    events.push(
      sseEvent('content_block_start', {
        index: blockIndex,
        content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} },
      }),
    );
    for (const partial_json of tool.jsonPieces ?? halves(JSON.stringify(tool.input))) {
      events.push(
        sseEvent('content_block_delta', {
          index: blockIndex,
          delta: { type: 'input_json_delta', partial_json },
        }),
      );
    }
    events.push(sseEvent('content_block_stop', { index: blockIndex }));
    blockIndex++;
  }
  const ending = [
    sseEvent('message_delta', {
      delta: { stop_reason: stopReasonOf(script), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    sseEvent('message_stop', {}),
  ];

  exchange.res.writeHead(200, sseHeaders(idHeaders));
  const delayMs = script.delayMs ?? 0;
  writePaced(exchange, events, delayMs, () => {
    switch (script.then ?? 'done') {
      case 'disconnect':
        exchange.later(AFTER_FLUSH_MS, () => exchange.cutConnection());
        return;
      case 'hang':
        return;
      case 'error':
        writePaced(
          exchange,
          [sseEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })],
          0,
          () => exchange.res.end(),
        );
        return;
      case 'done':
        writePaced(exchange, ending, delayMs, () => exchange.res.end());
        return;
    }
  });
}

function halves(text: string): string[] {
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}
