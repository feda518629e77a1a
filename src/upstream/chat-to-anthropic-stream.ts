import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../common/json-values';
import type { AnthropicMessage } from './anthropic-types';
import { ChatStreamTranslation, NO_VALID_CHUNK, type ChatStreamPiece } from './chat-stream-decoder';
import {
  formatAnthropicErrorEvent,
  toAnthropicStopReason,
  toAnthropicUsage,
} from './chat-to-anthropic-response';
import type { OpenAIUsage } from './openai-types';
import { formatSseData } from './sse';

export interface ChatToAnthropicStreamOptions {
  /** Named in `message_start` when the upstream's first chunk names none. */
  model: string;
}

/** Chat stream error types that have an Anthropic counterpart; anything else is an `api_error`. */
const STREAM_ERROR_TYPES: Record<string, string> = {
  invalid_request_error: 'invalid_request_error',
  authentication_error: 'authentication_error',
  permission_error: 'permission_error',
  not_found_error: 'not_found_error',
  rate_limit_error: 'rate_limit_error',
  rate_limit_exceeded: 'rate_limit_error',
  overloaded_error: 'overloaded_error',
};

/**
 * Turns an OpenAI `chat.completion.chunk` SSE stream into an Anthropic Messages SSE stream (`message_start`,
 * `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`), one upstream event at a time, so
 * each translated piece can be written as soon as it arrives. Never throws on malformed input.
 *
 * The message ends (`message_delta` with the stop reason and usage, then `message_stop`) at `[DONE]`, or when
 * the body ends after a `finish_reason`; a stream cut before either gets no invented ending, and one that ends
 * without a single readable chunk ends with an `error` event. An in-stream error chunk becomes an Anthropic
 * `error` event. Parallel tool calls become one block after the other (see `ToolCallSequencer`).
 */
export class ChatToAnthropicStreamTranslator extends ChatStreamTranslation {
  private id = `msg_${randomUUID().replaceAll('-', '')}`;
  private model: string;
  private started = false;
  private state: 'open' | 'completed' | 'failed' = 'open';
  private finishReason: string | null = null;
  private usage: OpenAIUsage | undefined;
  private nextBlock = 0;
  private openBlock: { index: number; kind: 'text' | 'tool' } | undefined;
  private readonly blockOfTool = new Map<number, number>();
  private readonly textParts: string[] = [];

  constructor(options: ChatToAnthropicStreamOptions) {
    super();
    this.model = options.model;
  }

  /** The assistant text written so far. */
  get text(): string {
    return this.textParts.join('');
  }

  /** True once `message_stop` was written: the answer is whole. */
  get completed(): boolean {
    return this.state === 'completed';
  }

  /** True once an `error` event was written (from the upstream or through `fail`). */
  get failed(): boolean {
    return this.state === 'failed';
  }

  /**
   * The `error` event to write when the upstream broke off mid-stream (the caller saw the body fail);
   * empty when the stream already ended.
   */
  fail(message: string, type = 'api_error'): string {
    if (this.state !== 'open') return '';
    this.state = 'failed';
    return formatAnthropicErrorEvent(type, message);
  }

  protected get ended(): boolean {
    return this.state !== 'open';
  }

  protected endOfBody(): string {
    return this.finishReason !== null ? this.finishMessage() : '';
  }

  protected translatePiece(piece: ChatStreamPiece): string {
    switch (piece.type) {
      case 'start':
        if (piece.id) this.id = piece.id;
        if (piece.model) this.model = piece.model;
        return this.ensureStarted();
      case 'text':
      case 'refusal':
        return this.ensureStarted() + this.textDelta(piece.text);
      case 'tool-call':
        return this.ensureStarted() + this.startTool(piece.index, piece.id, piece.name);
      case 'tool-arguments':
        return this.toolArguments(piece.index, piece.fragment);
      case 'finish':
        this.finishReason = piece.reason;
        return this.closeBlock();
      case 'usage':
        this.usage = piece.usage;
        return '';
      case 'done':
        // a stream that said nothing readable is no message: an error, never a made-up end_turn
        if (!this.started) return this.fail(NO_VALID_CHUNK);
        return this.finishMessage();
      case 'error':
        return this.upstreamError(piece.error);
    }
  }

  private ensureStarted(): string {
    if (this.started) return '';
    this.started = true;
    const message: AnthropicMessage = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return event('message_start', { message });
  }

  private textDelta(text: string): string {
    let out = '';
    if (this.openBlock?.kind !== 'text') {
      out += this.closeBlock() + this.openNewBlock('text', { type: 'text', text: '' });
    }
    this.textParts.push(text);
    return (
      out +
      event('content_block_delta', { index: this.openBlock?.index, delta: { type: 'text_delta', text } })
    );
  }

  private startTool(toolIndex: number, id: string, name: string): string {
    const out = this.closeBlock() + this.openNewBlock('tool', { type: 'tool_use', id, name, input: {} });
    if (this.openBlock) this.blockOfTool.set(toolIndex, this.openBlock.index);
    return out;
  }

  /** Arguments of a call whose block was already closed (interleaved calls) still go to that call's index. */
  private toolArguments(toolIndex: number, fragment: string): string {
    const index = this.blockOfTool.get(toolIndex);
    if (index === undefined) return '';
    return event('content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: fragment },
    });
  }

  private openNewBlock(kind: 'text' | 'tool', contentBlock: JsonObject): string {
    const index = this.nextBlock++;
    this.openBlock = { index, kind };
    return event('content_block_start', { index, content_block: contentBlock });
  }

  private closeBlock(): string {
    if (!this.openBlock) return '';
    const { index } = this.openBlock;
    this.openBlock = undefined;
    return event('content_block_stop', { index });
  }

  private finishMessage(): string {
    const usage = toAnthropicUsage(this.usage);
    const out =
      this.closeBlock() +
      event('message_delta', {
        delta: { stop_reason: toAnthropicStopReason(this.finishReason), stop_sequence: null },
        usage: {
          input_tokens: usage.input_tokens,
          output_tokens: usage.output_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
        },
      }) +
      event('message_stop', {});
    this.state = 'completed';
    return out;
  }

  private upstreamError(error: JsonObject): string {
    const type = typeof error.type === 'string' ? STREAM_ERROR_TYPES[error.type] : undefined;
    const message =
      typeof error.message === 'string' && error.message ? error.message : 'upstream stream error';
    return this.fail(message, type ?? 'api_error');
  }
}

function event(type: string, payload: Record<string, unknown>): string {
  return formatSseData(JSON.stringify({ type, ...payload }), type);
}
