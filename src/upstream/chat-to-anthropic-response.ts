import { anthropicErrorType } from '../common/api-error';
import { isPlainObject, parseJsonObject, type JsonObject } from '../common/json-values';
import type {
  AnthropicErrorBody,
  AnthropicMessage,
  AnthropicResponseBlock,
  AnthropicUsage,
} from './anthropic-types';
import type { OpenAIUsage } from './openai-types';
import { readChatCompletion } from './chat-completion-reader';
import { formatSseData } from './sse';

const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** Chat `finish_reason` -> Anthropic `stop_reason`; chat does not say which stop sequence matched. */
export function toAnthropicStopReason(finishReason: string | null | undefined): string {
  return (finishReason && STOP_REASONS[finishReason]) || 'end_turn';
}

/** Anthropic's `input_tokens` leave out cache reads, which chat counts inside `prompt_tokens`. */
export function toAnthropicUsage(usage: OpenAIUsage | undefined): AnthropicUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/** Tool arguments as the object Anthropic's `input` must be; arguments that are not a JSON object give `{}`. */
export function parseToolInput(argumentsText: unknown): JsonObject {
  return (typeof argumentsText === 'string' && parseJsonObject(argumentsText)) || {};
}

/**
 * Translates a `chat.completion` body (read from an OpenAI-compatible upstream) into an Anthropic `message`.
 * Reads defensively: a body without choices gives a message with no content.
 */
export function chatCompletionToAnthropicMessage(completion: unknown): AnthropicMessage {
  const parts = readChatCompletion(completion);
  const content: AnthropicResponseBlock[] = [];
  if (parts.text.length > 0) content.push({ type: 'text', text: parts.text });
  if (parts.refusal !== undefined) content.push({ type: 'text', text: parts.refusal });
  for (const call of parts.toolCalls) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseToolInput(call.arguments) });
  }
  return {
    id: parts.id ?? '',
    type: 'message',
    role: 'assistant',
    model: parts.model ?? '',
    content,
    stop_reason: parts.refusal !== undefined ? 'refusal' : toAnthropicStopReason(parts.finishReason),
    stop_sequence: null,
    usage: toAnthropicUsage(parts.usage),
  };
}

/** Rewrites an OpenAI-style error body (or anything else an upstream answered with) into Anthropic's shape. */
export function toAnthropicErrorBody(body: unknown, status: number): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message: errorMessage(body, status) } };
}

/** The human-readable message of an error body: `error.message`, `error` (a string) or `message`. */
export function errorMessage(body: unknown, status: number): string {
  if (isPlainObject(body)) {
    const { error } = body;
    if (isPlainObject(error) && typeof error.message === 'string' && error.message.length > 0)
      return error.message;
    if (typeof error === 'string' && error.length > 0) return error;
    if (typeof body.message === 'string' && body.message.length > 0) return body.message;
  }
  return `upstream returned status ${status}`;
}

/** One Anthropic `error` stream event (what a Messages stream ends with when it fails mid-way). */
export function formatAnthropicErrorEvent(type: string, message: string): string {
  const body: AnthropicErrorBody = { type: 'error', error: { type, message } };
  return formatSseData(JSON.stringify(body), 'error');
}
