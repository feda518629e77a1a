import { randomUUID } from 'node:crypto';
import { isPlainObject } from '../common/json-values';
import type { OpenAIUsage } from './openai-types';
import { formatSseData } from './sse';
import type {
  ResponsesError,
  ResponsesErrorEventFields,
  ResponsesOutputContent,
  ResponsesOutputItem,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesUsage,
} from './responses-types';
import { readChatCompletion } from './chat-completion-reader';

/** A Responses-style id: `resp_`, `msg_` or `fc_` and 32 hex digits. */
export function newResponsesId(prefix: 'resp' | 'msg' | 'fc'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

export function toResponsesUsage(usage: OpenAIUsage | undefined): ResponsesUsage {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage?.total_tokens ?? input + output,
  };
}

/** A cut by the token limit or the content filter makes the response `incomplete`, as the Responses API says. */
export function responsesOutcome(finishReason: string | null | undefined): {
  status: ResponsesStatus;
  incomplete_details: ResponsesResponse['incomplete_details'];
} {
  if (finishReason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') {
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  }
  return { status: 'completed', incomplete_details: null };
}

export interface ResponsesStreamError {
  message: string;
  /** Defaults to `server_error`. */
  code?: string;
  /** The nested error's type; defaults to `server_error`. */
  type?: string;
}

/** The fields of an `error` stream event (both the flat and the nested form; see `ResponsesErrorEventFields`). */
export function responsesErrorEventFields(error: ResponsesStreamError): ResponsesErrorEventFields {
  const code = error.code ?? 'server_error';
  return {
    code,
    message: error.message,
    param: null,
    error: { type: error.type ?? 'server_error', code, message: error.message, param: null },
  };
}

/**
 * An `error` event for a Responses stream relayed verbatim that the upstream broke off: `sequenceNumber` should
 * follow the upstream's last (`ResponsesStreamAccumulator.lastSequenceNumber` + 1).
 */
export function formatResponsesErrorEvent(sequenceNumber: number, error: ResponsesStreamError): string {
  const event = { type: 'error', sequence_number: sequenceNumber, ...responsesErrorEventFields(error) };
  return formatSseData(JSON.stringify(event), 'error');
}

export interface ResponseState {
  id: string;
  createdAt: number;
  model: string;
  status: ResponsesStatus;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  error?: ResponsesError | null;
  incompleteDetails?: ResponsesResponse['incomplete_details'];
}

/**
 * A whole `response` object: the state of this answer plus the request's settings echoed back as the Responses
 * API does (`instructions`, `tools`, `temperature`, ...). `request` is the inbound Responses body.
 */
export function responseObject(request: unknown, state: ResponseState): ResponsesResponse {
  const body = isPlainObject(request) ? request : {};
  const text = isPlainObject(body.text) ? body.text : {};
  return {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incompleteDetails ?? null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    model: state.model,
    output: state.output,
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    // Nothing is stored: a translated response cannot be fetched or continued by id later.
    store: false,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    text: { format: { type: 'text' }, ...text },
    tool_choice: (body.tool_choice as ResponsesResponse['tool_choice'] | undefined) ?? 'auto',
    tools: Array.isArray(body.tools) ? (body.tools as ResponsesResponse['tools']) : [],
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
    truncation: body.truncation === 'auto' ? 'auto' : 'disabled',
    usage: state.usage,
    user: typeof body.user === 'string' ? body.user : null,
    metadata: isPlainObject(body.metadata) ? (body.metadata as Record<string, string>) : {},
  };
}

export interface ChatCompletionToResponseOptions {
  /** Defaults to a new `resp_...` id. */
  id?: string;
  /** Unix seconds; defaults to now. */
  createdAt?: number;
}

/**
 * Translates a `chat.completion` body into a Responses `response` object for the inbound Responses `request`:
 * the text (and any refusal) as one `message` item, then one `function_call` item per tool call.
 */
export function chatCompletionToResponse(
  completion: unknown,
  request: unknown,
  options: ChatCompletionToResponseOptions = {},
): ResponsesResponse {
  const parts = readChatCompletion(completion);
  const outcome = responsesOutcome(parts.finishReason);
  const output: ResponsesOutputItem[] = [];
  const content: ResponsesOutputContent[] = [];
  if (parts.text.length > 0)
    content.push({ type: 'output_text', text: parts.text, annotations: [], logprobs: [] });
  if (parts.refusal !== undefined) content.push({ type: 'refusal', refusal: parts.refusal });
  if (content.length > 0) {
    const status = outcome.status === 'completed' ? 'completed' : 'incomplete';
    output.push({ type: 'message', id: newResponsesId('msg'), role: 'assistant', status, content });
  }
  for (const call of parts.toolCalls) {
    output.push({
      type: 'function_call',
      id: newResponsesId('fc'),
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    });
  }
  const requestModel = isPlainObject(request) && typeof request.model === 'string' ? request.model : '';
  return responseObject(request, {
    id: options.id ?? newResponsesId('resp'),
    createdAt: options.createdAt ?? Math.floor(Date.now() / 1000),
    model: parts.model ?? requestModel,
    status: outcome.status,
    incompleteDetails: outcome.incomplete_details,
    output,
    usage: toResponsesUsage(parts.usage),
  });
}
