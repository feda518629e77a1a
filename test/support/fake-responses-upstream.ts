import type { LooseJson } from './fake-openai-upstream';

// The OpenAI Responses API (`POST /v1/responses`) of the fake OpenAI upstream: the answers it builds, as the
// real API shapes them (SDK types `openai/resources/responses`). The fake's server writes them
// (fake-openai-upstream.ts); this file only builds bodies and events.

export interface FakeFunctionCall {
  callId: string;
  name: string;
  arguments: string;
  /** How the streamed `function_call_arguments.delta` events split `arguments`; defaults to one piece. */
  argumentPieces?: string[];
}

/**
 * A response, answered as JSON or as typed SSE events depending on the request's `stream` flag. `status`
 * 'incomplete' ends it the way a `max_output_tokens` cut does. `then` changes a streamed ending: 'failed' sends
 * `response.failed`, 'error' an `error` event, 'disconnect' cuts the socket, 'hang' stops writing; each after
 * the output items, instead of `response.completed`.
 */
export interface FakeResponseScript {
  kind: 'response';
  text?: string[];
  functionCalls?: FakeFunctionCall[];
  status?: 'completed' | 'incomplete';
  usage?: { input_tokens: number; output_tokens: number };
  delayMs?: number;
  then?: 'done' | 'failed' | 'error' | 'disconnect' | 'hang';
}

export interface FakeResponseStream {
  /** Everything up to the terminal event: lifecycle start and every output item. */
  opening: string[];
  /** The terminal event for `then` ('done', 'failed', 'error'); empty for 'disconnect' and 'hang'. */
  ending: string[];
}

/** The text of the last user message item of `input` (a string input as it is), for the echo default. */
export function lastResponsesUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item: LooseJson = input[i];
    if (item?.role !== 'user' || (item.type !== undefined && item.type !== 'message')) continue;
    if (typeof item.content === 'string') return item.content;
    if (Array.isArray(item.content)) {
      return item.content
        .filter((part: LooseJson) => part?.type === 'input_text' && typeof part.text === 'string')
        .map((part: LooseJson) => part.text as string)
        .join(' ');
    }
  }
  return '';
}

type Usage = { input_tokens: number; output_tokens: number };

function outputItems(script: FakeResponseScript, requestNumber: number, itemStatus: string): LooseJson[] {
  const items: LooseJson[] = [];
  const text = (script.text ?? []).join('');
  if (script.text?.length) {
    items.push({
      id: `msg_fake_${requestNumber}`,
      type: 'message',
      status: itemStatus,
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
  }
  (script.functionCalls ?? []).forEach((call, i) => {
    items.push({
      id: `fc_fake_${requestNumber}_${i}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.callId,
      name: call.name,
      arguments: call.arguments,
    });
  });
  return items;
}

/** A whole `response` object, the request's settings echoed as the real API does. */
export function responseBody(
  request: LooseJson,
  script: FakeResponseScript,
  requestNumber: number,
  usage: Usage,
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed' = script.status ?? 'completed',
): LooseJson {
  const finished = status === 'completed' || status === 'incomplete';
  return {
    id: `resp_fake_${requestNumber}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    background: false,
    error:
      status === 'failed'
        ? { code: 'server_error', message: 'The model failed to generate a response.' }
        : null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request?.instructions ?? null,
    max_output_tokens: request?.max_output_tokens ?? null,
    model: typeof request?.model === 'string' ? request.model : 'fake-model',
    output: finished ? outputItems(script, requestNumber, status) : [],
    parallel_tool_calls: request?.parallel_tool_calls ?? true,
    previous_response_id: request?.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: request?.store ?? true,
    temperature: request?.temperature ?? 1,
    text: request?.text ?? { format: { type: 'text' } },
    tool_choice: request?.tool_choice ?? 'auto',
    tools: request?.tools ?? [],
    top_p: request?.top_p ?? 1,
    truncation: 'disabled',
    usage: finished
      ? {
          input_tokens: usage.input_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: usage.output_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.input_tokens + usage.output_tokens,
        }
      : null,
    user: null,
    metadata: request?.metadata ?? {},
  };
}

/** The typed SSE events of a streamed response, with `sequence_number`s counting from 0 across both parts. */
export function responseStream(
  request: LooseJson,
  script: FakeResponseScript,
  requestNumber: number,
  usage: Usage,
): FakeResponseStream {
  let sequence = 0;
  const event = (type: string, payload: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...payload })}\n\n`;
  const opening = [
    event('response.created', {
      response: responseBody(request, script, requestNumber, usage, 'in_progress'),
    }),
    event('response.in_progress', {
      response: responseBody(request, script, requestNumber, usage, 'in_progress'),
    }),
  ];
  const itemStatus = script.status ?? 'completed';
  const [message, ...calls] = script.text?.length
    ? outputItems(script, requestNumber, itemStatus)
    : [undefined, ...outputItems(script, requestNumber, itemStatus)];
  let outputIndex = 0;
  if (message) {
    const place = { item_id: message.id, output_index: outputIndex, content_index: 0 };
    const text: string = message.content[0].text;
    opening.push(
      event('response.output_item.added', {
        output_index: outputIndex,
        item: { ...message, status: 'in_progress', content: [] },
      }),
      event('response.content_part.added', {
        ...place,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      }),
      ...(script.text ?? []).map((delta) =>
        event('response.output_text.delta', { ...place, delta, logprobs: [] }),
      ),
      event('response.output_text.done', { ...place, text, logprobs: [] }),
      event('response.content_part.done', { ...place, part: message.content[0] }),
      event('response.output_item.done', { output_index: outputIndex, item: message }),
    );
    outputIndex++;
  }
  calls.forEach((item: LooseJson, i) => {
    const place = { item_id: item.id, output_index: outputIndex };
    const pieces = script.functionCalls?.[i]?.argumentPieces ?? [item.arguments as string];
    opening.push(
      event('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', arguments: '' },
      }),
      ...pieces.map((delta) => event('response.function_call_arguments.delta', { ...place, delta })),
      event('response.function_call_arguments.done', {
        ...place,
        name: item.name,
        arguments: item.arguments,
      }),
      event('response.output_item.done', { output_index: outputIndex, item }),
    );
    outputIndex++;
  });

  const then = script.then ?? 'done';
  const ending: string[] = [];
  if (then === 'done') {
    const status = script.status ?? 'completed';
    ending.push(
      event(status === 'completed' ? 'response.completed' : 'response.incomplete', {
        response: responseBody(request, script, requestNumber, usage, status),
      }),
    );
  } else if (then === 'failed') {
    ending.push(
      event('response.failed', { response: responseBody(request, script, requestNumber, usage, 'failed') }),
    );
  } else if (then === 'error') {
    ending.push(event('error', { code: 'server_error', message: 'The server had an error.', param: null }));
  }
  return { opening, ending };
}
