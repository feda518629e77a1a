import { randomUUID } from 'node:crypto';
import type { AnthropicUsage } from './anthropic-types';
import { nowSeconds, toOpenAIFinishReason, toOpenAIUsage } from './anthropic-response-translation';
import { isPlainObject, parseJsonObject, type JsonObject } from '../common/json-values';
import type {
  OpenAIChatCompletionChunk,
  OpenAIChunkDelta,
  OpenAIErrorBody,
  OpenAIFinishReason,
} from './openai-types';
import { formatSseData, SseParser, type SseEvent } from './sse';

export interface AnthropicStreamTranslatorOptions {
  /** Model named in chunks until `message_start` reports the upstream's own. */
  model: string;
  /** The OpenAI request's `stream_options.include_usage`. */
  includeUsage?: boolean;
  /** Unix seconds shared by all chunks; defaults to now. */
  created?: number;
}

/**
 * Turns an Anthropic Messages SSE stream into OpenAI `chat.completion.chunk` SSE text, one upstream event at a
 * time, so the proxy can write each translated piece as soon as it arrives. Never throws on malformed input.
 */
export class AnthropicStreamTranslator {
  private readonly parser = new SseParser();
  private readonly includeUsage: boolean;
  private readonly created: number;
  private id = `chatcmpl-${randomUUID()}`;
  private model: string;
  private started = false;
  private finishedStream = false;
  private stopped = false;
  private stopReason: string | null = null;
  private usage: Partial<AnthropicUsage> = {};
  private readonly toolIndexByBlock = new Map<number, number>();
  private readonly textParts: string[] = [];
  private malformed = 0;

  constructor(options: AnthropicStreamTranslatorOptions) {
    this.model = options.model;
    this.includeUsage = options.includeUsage === true;
    this.created = options.created ?? nowSeconds();
  }

  /** True once `[DONE]` or an error chunk was produced; later input is ignored. */
  get finished(): boolean {
    return this.finishedStream;
  }

  /** True once `message_stop` was translated (the answer is whole); an upstream `error` event is not. */
  get completed(): boolean {
    return this.stopped;
  }

  get malformedEvents(): number {
    return this.malformed;
  }

  /** Assistant text produced so far. */
  get text(): string {
    return this.textParts.join('');
  }

  /** Feeds raw upstream bytes; returns the OpenAI SSE text to write (possibly empty). */
  push(chunk: Uint8Array | string): string {
    return this.parser
      .push(chunk)
      .map((event) => this.translate(event))
      .join('');
  }

  /** Flushes the parser when the upstream body ends. A cut stream gets no synthetic `[DONE]`. */
  end(): string {
    return this.parser
      .end()
      .map((event) => this.translate(event))
      .join('');
  }

  translate(event: SseEvent): string {
    if (this.finishedStream) return '';
    const payload = parseJsonObject(event.data);
    const type = typeof payload?.type === 'string' ? payload.type : event.event;
    if (!payload || !type) {
      this.malformed++;
      return '';
    }
    switch (type) {
      case 'message_start':
        return this.onMessageStart(payload);
      case 'content_block_start':
        return this.onContentBlockStart(payload);
      case 'content_block_delta':
        return this.onContentBlockDelta(payload);
      case 'message_delta':
        this.onMessageDelta(payload);
        return '';
      case 'message_stop':
        return this.onMessageStop();
      case 'error':
        return this.onError(payload);
      default:
        // ping, content_block_stop and event types added later carry nothing OpenAI clients expect.
        return '';
    }
  }

  private onMessageStart(payload: JsonObject): string {
    const message = isPlainObject(payload.message) ? payload.message : {};
    if (typeof message.id === 'string') this.id = message.id;
    if (typeof message.model === 'string') this.model = message.model;
    this.mergeUsage(message.usage);
    return this.ensureStarted();
  }

  private onContentBlockStart(payload: JsonObject): string {
    const block = isPlainObject(payload.content_block) ? payload.content_block : undefined;
    const blockIndex = typeof payload.index === 'number' ? payload.index : -1;
    if (!block) {
      this.malformed++;
      return '';
    }
    if (block.type === 'text' && typeof block.text === 'string' && block.text.length > 0) {
      return this.ensureStarted() + this.contentChunk(block.text);
    }
    if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      const toolIndex = this.toolIndexByBlock.size;
      this.toolIndexByBlock.set(blockIndex, toolIndex);
      const initialInput =
        isPlainObject(block.input) && Object.keys(block.input).length > 0 ? block.input : undefined;
      return (
        this.ensureStarted() +
        this.chunk({
          tool_calls: [
            {
              index: toolIndex,
              id: block.id,
              type: 'function',
              function: { name: block.name, arguments: initialInput ? JSON.stringify(initialInput) : '' },
            },
          ],
        })
      );
    }
    return '';
  }

  private onContentBlockDelta(payload: JsonObject): string {
    const delta = isPlainObject(payload.delta) ? payload.delta : undefined;
    if (!delta) {
      this.malformed++;
      return '';
    }
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text.length > 0) {
      return this.ensureStarted() + this.contentChunk(delta.text);
    }
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
      const toolIndex =
        typeof payload.index === 'number' ? this.toolIndexByBlock.get(payload.index) : undefined;
      if (toolIndex === undefined || delta.partial_json.length === 0) return '';
      return this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] });
    }
    // thinking, signature and citation deltas have no chat-completions counterpart.
    return '';
  }

  private onMessageDelta(payload: JsonObject): void {
    const delta = isPlainObject(payload.delta) ? payload.delta : {};
    if (typeof delta.stop_reason === 'string') this.stopReason = delta.stop_reason;
    this.mergeUsage(payload.usage);
  }

  private onMessageStop(): string {
    const parts = [this.ensureStarted(), this.chunk({}, toOpenAIFinishReason(this.stopReason))];
    if (this.includeUsage) {
      const usageChunk: OpenAIChatCompletionChunk = {
        ...this.chunkEnvelope(),
        choices: [],
        usage: toOpenAIUsage(this.usage),
      };
      parts.push(formatSseData(JSON.stringify(usageChunk)));
    }
    parts.push(formatSseData('[DONE]'));
    this.finishedStream = true;
    this.stopped = true;
    return parts.join('');
  }

  private onError(payload: JsonObject): string {
    const error = isPlainObject(payload.error) ? payload.error : {};
    const body: OpenAIErrorBody = {
      error: {
        message: typeof error.message === 'string' ? error.message : 'upstream stream error',
        type: typeof error.type === 'string' ? error.type : 'upstream_error',
        param: null,
        code: null,
      },
    };
    this.finishedStream = true;
    return formatSseData(JSON.stringify(body));
  }

  private mergeUsage(value: unknown): void {
    if (!isPlainObject(value)) return;
    for (const key of [
      'input_tokens',
      'output_tokens',
      'cache_creation_input_tokens',
      'cache_read_input_tokens',
    ] as const) {
      const count = value[key];
      if (typeof count === 'number') this.usage[key] = count;
    }
  }

  private ensureStarted(): string {
    if (this.started) return '';
    this.started = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  private contentChunk(text: string): string {
    this.textParts.push(text);
    return this.chunk({ content: text });
  }

  private chunk(delta: OpenAIChunkDelta, finishReason: OpenAIFinishReason | null = null): string {
    const chunk: OpenAIChatCompletionChunk = {
      ...this.chunkEnvelope(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (this.includeUsage) chunk.usage = null;
    return formatSseData(JSON.stringify(chunk));
  }

  private chunkEnvelope(): Omit<OpenAIChatCompletionChunk, 'choices'> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model };
  }
}
