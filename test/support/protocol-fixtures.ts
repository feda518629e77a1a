import { RequestTranslationError } from '../../src/upstream/request-translation-error';
import { SseParser } from '../../src/upstream/sse';

// For the protocol translation specs: builders of OpenAI `chat.completion.chunk` streams as an upstream writes
// them, a reader of the typed SSE streams (Anthropic Messages, OpenAI Responses) the translations write, and
// the error a request translation throws.

/** The RequestTranslationError that `translate` throws; fails the test when it throws nothing or another error. */
export function translationError(translate: () => unknown): RequestTranslationError {
  try {
    translate();
  } catch (error) {
    if (error instanceof RequestTranslationError) return error;
    throw error;
  }
  throw new Error('expected a RequestTranslationError');
}

export interface ChunkOptions {
  id?: string;
  model?: string;
}

/** One chunk event with the first choice's `delta` (and optional finish reason). */
export function chatChunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  options: ChunkOptions = {},
): string {
  return chatEvent({
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...options,
  });
}

export function chatEvent(fields: Record<string, unknown>): string {
  const chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', ...fields };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export const DONE = 'data: [DONE]\n\n';

export function usageEvent(prompt: number, completion: number, cached?: number): string {
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (cached !== undefined) usage.prompt_tokens_details = { cached_tokens: cached };
  return chatEvent({ choices: [], usage });
}

/** A plain text answer streamed in `pieces`, with usage and `[DONE]`. */
export function textStream(pieces: string[], finishReason = 'stop'): string {
  return [
    chatChunk({ role: 'assistant', content: '' }),
    ...pieces.map((content) => chatChunk({ content })),
    chatChunk({}, finishReason),
    usageEvent(11, pieces.length),
    DONE,
  ].join('');
}

/** Two tool calls, streamed the way OpenAI does: id and name first, then argument fragments. */
export function toolStream(): string {
  const call = (index: number, fields: Record<string, unknown>) =>
    chatChunk({ tool_calls: [{ index, ...fields }] });
  return [
    chatChunk({ role: 'assistant', content: null }),
    chatChunk({ content: 'Let me look.' }),
    call(0, { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }),
    call(0, { function: { arguments: '{"city":' } }),
    call(0, { function: { arguments: '"Paris"}' } }),
    call(1, { id: 'call_b', type: 'function', function: { name: 'now', arguments: '{}' } }),
    chatChunk({}, 'tool_calls'),
    usageEvent(30, 12),
    DONE,
  ].join('');
}

export interface TypedEvent {
  /** The SSE `event:` line. */
  event: string | undefined;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

/** Parses typed SSE text (`event:` + JSON `data:`) into events. */
export function typedEvents(text: string): TypedEvent[] {
  return new SseParser()
    .push(text)
    .map((event) => ({ event: event.event, data: JSON.parse(event.data) as unknown }));
}

/** Feeds `input` to `push` in `size`-byte slices (splitting UTF-8 sequences), then calls `end`. */
export function feedInPieces(
  translator: { push(chunk: Uint8Array): string; end(): string },
  input: string,
  size: number,
): string {
  const bytes = Buffer.from(input, 'utf8');
  let output = '';
  for (let i = 0; i < bytes.length; i += size) output += translator.push(bytes.subarray(i, i + size));
  return output + translator.end();
}
