import { StringDecoder } from 'node:string_decoder';
import { isPlainObject, parseJsonObject } from '../common/json-values';
import type { OpenAIUsage } from './openai-types';

export interface SseEvent {
  data: string;
  event?: string;
  id?: string;
}

export interface SseParserOptions {
  /** Lines or event data beyond this many characters are dropped rather than buffered without bound. */
  maxEventChars?: number;
}

const DEFAULT_MAX_EVENT_CHARS = 8 * 1024 * 1024;
const LF = 10;
const CR = 13;

/**
 * Incremental Server-Sent Events parser (WHATWG event-stream rules). Accepts chunks split anywhere, including
 * inside a UTF-8 sequence or between the CR and LF of a line ending, and never throws on malformed input.
 */
export class SseParser {
  /** UTF-8, a character split between chunks completed by the next (a third of TextDecoder's cost per chunk). */
  private readonly decoder = new StringDecoder('utf8');
  /** Until the first decoded character: a byte order mark there is not part of the stream. */
  private atStart = true;
  private readonly maxEventChars: number;
  private pending = '';
  private skipNextLf = false;
  private discardingLine = false;
  private dataLines: string[] = [];
  private dataChars = 0;
  private eventOversized = false;
  private eventType: string | undefined;
  private lastEventId: string | undefined;
  private droppedCount = 0;

  constructor(options: SseParserOptions = {}) {
    this.maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  }

  /** Events (or over-long lines) dropped because they exceeded `maxEventChars`. */
  get dropped(): number {
    return this.droppedCount;
  }

  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.decoded(this.decoder.write(chunk));
    const events: SseEvent[] = [];
    this.consume(text, events);
    return events;
  }

  /** Flushes the decoder. An event not terminated by a blank line is discarded, as the SSE spec requires. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    this.consume(this.decoded(this.decoder.end()), events);
    this.pending = '';
    this.resetEvent();
    return events;
  }

  /** Decoded text, without the byte order mark the stream may start with. */
  private decoded(text: string): string {
    if (!this.atStart || text.length === 0) return text;
    this.atStart = false;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  private consume(text: string, events: SseEvent[]): void {
    let start = 0;
    if (this.skipNextLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) start = 1;
      this.skipNextLf = false;
    }
    let lineStart = start;
    for (let i = start; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== LF && code !== CR) continue;
      if (this.pending === '') this.completeLine(text, lineStart, i, events);
      else {
        const line = this.pending + text.slice(lineStart, i);
        this.pending = '';
        this.completeLine(line, 0, line.length, events);
      }
      if (code === CR) {
        if (i + 1 === text.length) this.skipNextLf = true;
        else if (text.charCodeAt(i + 1) === LF) i++;
      }
      lineStart = i + 1;
    }
    this.bufferPartialLine(text.slice(lineStart));
  }

  private bufferPartialLine(rest: string): void {
    if (rest.length === 0) return;
    if (this.discardingLine) return;
    if (this.pending.length + rest.length > this.maxEventChars) {
      this.pending = '';
      this.discardingLine = true;
      return;
    }
    this.pending += rest;
  }

  /** The line `text` holds from `start` to `end`, without its line ending. */
  private completeLine(text: string, start: number, end: number, events: SseEvent[]): void {
    if (this.discardingLine) {
      this.discardingLine = false;
      this.eventOversized = true;
      return;
    }
    if (start === end) {
      this.dispatch(events);
      return;
    }
    if (text.charCodeAt(start) === 0x3a /* ':' comment */) return;
    // searched within the line only: a search to the end of the chunk for every line would be quadratic
    let colon = -1;
    for (let i = start; i < end && colon === -1; i++) if (text.charCodeAt(i) === 0x3a) colon = i;
    const field = colon === -1 ? text.slice(start, end) : text.slice(start, colon);
    let valueStart = colon === -1 ? end : colon + 1;
    if (valueStart < end && text.charCodeAt(valueStart) === 0x20) valueStart++;
    this.applyField(field, text.slice(valueStart, end));
  }

  private applyField(field: string, value: string): void {
    switch (field) {
      case 'data':
        this.dataChars += value.length + 1;
        if (this.dataChars > this.maxEventChars) this.eventOversized = true;
        else this.dataLines.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastEventId = value;
        break;
      default:
        // 'retry' and unknown fields carry nothing the relay needs.
        break;
    }
  }

  private dispatch(events: SseEvent[]): void {
    if (this.eventOversized) {
      this.droppedCount++;
    } else if (this.dataLines.length > 0) {
      const data = this.dataLines.length === 1 ? this.dataLines[0] : this.dataLines.join('\n');
      const event: SseEvent = { data };
      if (this.eventType) event.event = this.eventType;
      if (this.lastEventId !== undefined) event.id = this.lastEventId;
      events.push(event);
    }
    this.resetEvent();
  }

  private resetEvent(): void {
    if (this.dataLines.length > 0) this.dataLines = [];
    this.dataChars = 0;
    this.eventType = undefined;
    this.eventOversized = false;
  }
}

/** Parses a byte stream (e.g. an undici response body) into SSE events. */
export async function* parseSseStream(
  source: AsyncIterable<Uint8Array | string>,
  options?: SseParserOptions,
): AsyncGenerator<SseEvent> {
  const parser = new SseParser(options);
  for await (const chunk of source) yield* parser.push(chunk);
  yield* parser.end();
}

/** Formats one SSE event whose data is a single line (JSON or a sentinel such as `[DONE]`). */
export function formatSseData(data: string, event?: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

/** Feeds raw SSE bytes through a parser to `pushEvent`, one complete event at a time: the base of the stream readers. */
export abstract class SseEventReader {
  private readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    this.parser = new SseParser(options);
  }

  /** Feeds raw upstream bytes. */
  push(chunk: Uint8Array | string): void {
    for (const event of this.parser.push(chunk)) this.pushEvent(event);
  }

  /** Call when the upstream body ended (or was cut). */
  end(): void {
    for (const event of this.parser.end()) this.pushEvent(event);
  }

  abstract pushEvent(event: SseEvent): void;
}

export interface ChatStreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatStreamSummary {
  /** Assistant text per choice index, in arrival order. */
  contentByChoice: Map<number, string>;
  finishReasonByChoice: Map<number, string>;
  id?: string;
  model?: string;
  usage?: ChatStreamUsage;
  /** The `error` object of an in-stream error event, if one arrived. */
  error?: unknown;
  sawDone: boolean;
  /** Events whose data was not a JSON object shaped like a chunk. */
  malformedEvents: number;
}

const DONE_SENTINEL = '[DONE]';

/**
 * Side-accumulates the assistant text of an OpenAI `chat.completion.chunk` stream while the relay forwards the
 * bytes untouched. Never throws: anything it does not understand is counted as malformed and skipped.
 */
export class ChatCompletionStreamAccumulator extends SseEventReader {
  private readonly parts = new Map<number, string[]>();
  private readonly finishReasons = new Map<number, string>();
  private id: string | undefined;
  private model: string | undefined;
  private usage: ChatStreamUsage | undefined;
  private error: unknown;
  private sawDone = false;
  private malformed = 0;
  /** Events that were chunks (a JSON object with `choices`). */
  private chunks = 0;

  pushEvent(event: SseEvent): void {
    const data = event.data.trim();
    if (data === DONE_SENTINEL) {
      this.sawDone = true;
      return;
    }
    const chunk = parseJsonObject(data);
    if (chunk === undefined) {
      this.malformed++;
      return;
    }
    if ('error' in chunk && chunk.error !== undefined && chunk.error !== null) {
      this.error = chunk.error;
      return;
    }
    if (!Array.isArray(chunk.choices)) {
      this.malformed++;
      return;
    }
    this.chunks++;
    if (typeof chunk.id === 'string') this.id ??= chunk.id;
    if (typeof chunk.model === 'string') this.model ??= chunk.model;
    const usage = readChatUsage(chunk.usage);
    if (usage) this.usage = usage;
    for (const choice of chunk.choices) this.applyChoice(choice);
  }

  text(choiceIndex = 0): string {
    return (this.parts.get(choiceIndex) ?? []).join('');
  }

  /**
   * The answer of the first choice when the stream finished (a finish reason or `[DONE]`) without an error event,
   * having carried at least one valid chunk; else null.
   */
  completedText(): string | null {
    const finished = this.sawDone || this.finishReasons.size > 0;
    return finished && this.chunks > 0 && this.error === undefined ? this.text(0) : null;
  }

  summary(): ChatStreamSummary {
    const contentByChoice = new Map<number, string>();
    for (const index of this.parts.keys()) contentByChoice.set(index, this.text(index));
    return {
      contentByChoice,
      finishReasonByChoice: new Map(this.finishReasons),
      id: this.id,
      model: this.model,
      usage: this.usage,
      error: this.error,
      sawDone: this.sawDone,
      malformedEvents: this.malformed,
    };
  }

  private applyChoice(choice: unknown): void {
    if (!isPlainObject(choice)) {
      this.malformed++;
      return;
    }
    const index = typeof choice.index === 'number' ? choice.index : 0;
    const delta = choice.delta;
    if (isPlainObject(delta) && typeof delta.content === 'string' && delta.content.length > 0) {
      const parts = this.parts.get(index);
      if (parts) parts.push(delta.content);
      else this.parts.set(index, [delta.content]);
    }
    if (typeof choice.finish_reason === 'string') this.finishReasons.set(index, choice.finish_reason);
  }
}

/** Accumulates a whole stream of already-parsed SSE events. */
export async function accumulateChatCompletionStream(
  events: AsyncIterable<SseEvent> | Iterable<SseEvent>,
): Promise<ChatStreamSummary> {
  const accumulator = new ChatCompletionStreamAccumulator();
  for await (const event of events) accumulator.pushEvent(event);
  return accumulator.summary();
}

/** A chat `usage` object with its numbers checked (token details kept when present); undefined when malformed. */
export function readChatUsage(value: unknown): OpenAIUsage | undefined {
  if (!isPlainObject(value)) return undefined;
  const { prompt_tokens, completion_tokens, total_tokens } = value;
  if (typeof prompt_tokens !== 'number' || typeof completion_tokens !== 'number') return undefined;
  const usage: OpenAIUsage = {
    prompt_tokens,
    completion_tokens,
    total_tokens: typeof total_tokens === 'number' ? total_tokens : prompt_tokens + completion_tokens,
  };
  const cached = isPlainObject(value.prompt_tokens_details)
    ? value.prompt_tokens_details.cached_tokens
    : undefined;
  if (typeof cached === 'number') usage.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = isPlainObject(value.completion_tokens_details)
    ? value.completion_tokens_details.reasoning_tokens
    : undefined;
  if (typeof reasoning === 'number') usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}
