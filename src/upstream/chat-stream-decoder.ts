import { randomUUID } from 'node:crypto';
import { isPlainObject, parseJsonObject, type JsonObject } from '../common/json-values';
import type { OpenAIUsage } from './openai-types';
import { readChatUsage, SseParser, type SseEvent } from './sse';

/** What a `chat.completion.chunk` stream says, one piece at a time, for translators into other protocols. */
export type ChatStreamPiece =
  /** The first chunk arrived (before any of its content). */
  | { type: 'start'; id: string | undefined; model: string | undefined }
  | { type: 'text'; text: string }
  | { type: 'refusal'; text: string }
  /** A tool call begins; its arguments follow as `tool-arguments` pieces with the same index. */
  | { type: 'tool-call'; index: number; id: string; name: string }
  | { type: 'tool-arguments'; index: number; fragment: string }
  | { type: 'finish'; reason: string }
  | { type: 'usage'; usage: OpenAIUsage }
  | { type: 'done' }
  /** An in-stream error chunk (`{"error": {...}}`); nothing after it is read. */
  | { type: 'error'; error: JsonObject };

/**
 * Decodes OpenAI chat-completions SSE bytes into `ChatStreamPiece`s. Only the first choice is read (the
 * translations never ask for more). Never throws: events it cannot read are counted in `malformedEvents`.
 */
export class ChatStreamDecoder {
  private readonly parser = new SseParser();
  private started = false;
  private ended = false;
  private readonly toolIndexes = new Set<number>();
  private lastToolIndex: number | undefined;
  private malformed = 0;

  get malformedEvents(): number {
    return this.malformed;
  }

  push(chunk: Uint8Array | string): ChatStreamPiece[] {
    return this.parser.push(chunk).flatMap((event) => this.decode(event));
  }

  end(): ChatStreamPiece[] {
    return this.parser.end().flatMap((event) => this.decode(event));
  }

  decode(event: SseEvent): ChatStreamPiece[] {
    if (this.ended) return [];
    const data = event.data.trim();
    if (data === '[DONE]') {
      this.ended = true;
      return [{ type: 'done' }];
    }
    const chunk = parseJsonObject(data);
    if (!chunk) {
      this.malformed++;
      return [];
    }
    if (chunk.error !== undefined && chunk.error !== null) {
      this.ended = true;
      const error = isPlainObject(chunk.error)
        ? chunk.error
        : { message: typeof chunk.error === 'string' ? chunk.error : JSON.stringify(chunk.error) };
      return [{ type: 'error', error }];
    }
    if (!Array.isArray(chunk.choices)) {
      this.malformed++;
      return [];
    }
    const pieces: ChatStreamPiece[] = [];
    if (!this.started) {
      this.started = true;
      pieces.push({
        type: 'start',
        id: typeof chunk.id === 'string' ? chunk.id : undefined,
        model: typeof chunk.model === 'string' ? chunk.model : undefined,
      });
    }
    const choice: unknown = chunk.choices.find(
      (candidate: unknown) => isPlainObject(candidate) && (candidate.index ?? 0) === 0,
    );
    if (isPlainObject(choice)) this.readChoice(choice, pieces);
    const usage = readChatUsage(chunk.usage);
    if (usage) pieces.push({ type: 'usage', usage });
    return pieces;
  }

  private readChoice(choice: JsonObject, pieces: ChatStreamPiece[]): void {
    const delta = isPlainObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      pieces.push({ type: 'text', text: delta.content });
    }
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      pieces.push({ type: 'refusal', text: delta.refusal });
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        if (isPlainObject(call)) this.readToolCall(call, pieces);
        else this.malformed++;
      }
    }
    if (typeof choice.finish_reason === 'string')
      pieces.push({ type: 'finish', reason: choice.finish_reason });
  }

  private readToolCall(call: JsonObject, pieces: ChatStreamPiece[]): void {
    const fn = isPlainObject(call.function) ? call.function : {};
    const id = typeof call.id === 'string' && call.id.length > 0 ? call.id : undefined;
    // Some OpenAI-compatible servers leave out `index`; a new id then starts a new call.
    const index =
      typeof call.index === 'number'
        ? call.index
        : id !== undefined || this.lastToolIndex === undefined
          ? this.toolIndexes.size
          : this.lastToolIndex;
    if (!this.toolIndexes.has(index)) {
      this.toolIndexes.add(index);
      pieces.push({
        type: 'tool-call',
        index,
        id: id ?? `call_${randomUUID().replaceAll('-', '')}`,
        name: typeof fn.name === 'string' ? fn.name : '',
      });
    }
    this.lastToolIndex = index;
    if (typeof fn.arguments === 'string' && fn.arguments.length > 0) {
      pieces.push({ type: 'tool-arguments', index, fragment: fn.arguments });
    }
  }
}

/** Why a chat stream that ended (`[DONE]`) without one readable chunk is not an answer. */
export const NO_VALID_CHUNK = 'The upstream stream ended without one valid chat.completion.chunk.';

/**
 * Puts the tool calls of a chat stream one after the other, as the Messages and Responses streams have
 * them: a call's pieces are held while an earlier call's arguments are still incomplete (upstreams that
 * stream parallel calls interleaved), and let through once they are, so that a translator that closes a
 * call when the next one starts closes each only when its arguments are whole. Arguments are whole when
 * they parse as JSON; what is still held when the text, the finish or the end comes is let through then.
 */
export class ToolCallSequencer {
  /** The call being let through, and its arguments so far. */
  private live: { index: number; text: string } | undefined;
  /** Calls that started while the live one was incomplete, in order, with the pieces held for each. */
  private readonly held: Array<{ index: number; pieces: ChatStreamPiece[] }> = [];

  /** The pieces to translate now for one decoded piece, in order. */
  pass(piece: ChatStreamPiece): ChatStreamPiece[] {
    switch (piece.type) {
      case 'tool-call':
        if (this.live === undefined || (this.held.length === 0 && wholeJson(this.live.text))) {
          this.live = { index: piece.index, text: '' };
          return [piece];
        }
        this.held.push({ index: piece.index, pieces: [piece] });
        return [];
      case 'tool-arguments': {
        const waiting = this.held.find((call) => call.index === piece.index);
        if (waiting !== undefined) {
          waiting.pieces.push(piece);
          return [];
        }
        if (piece.index !== this.live?.index) return [piece];
        this.live.text += piece.fragment;
        return this.held.length > 0 && wholeJson(this.live.text) ? [piece, ...this.nextLive()] : [piece];
      }
      case 'usage':
      case 'error':
      case 'start':
        return [piece];
      default:
        return [...this.release(), piece];
    }
  }

  /** Everything still held, in order (the stream goes on with something that is not a call, or ends). */
  release(): ChatStreamPiece[] {
    const pieces = this.held.splice(0).flatMap((call) => call.pieces);
    this.live = undefined;
    return pieces;
  }

  /** The held calls from the first on, as long as each one let through is whole. */
  private nextLive(): ChatStreamPiece[] {
    const out: ChatStreamPiece[] = [];
    while (this.held.length > 0 && (this.live === undefined || wholeJson(this.live.text))) {
      const call = this.held.shift()!;
      const text = call.pieces
        .map((piece) => (piece.type === 'tool-arguments' ? piece.fragment : ''))
        .join('');
      this.live = { index: call.index, text };
      out.push(...call.pieces);
    }
    return out;
  }
}

/** Whether tool arguments are whole: JSON that parses (tried only when it ends as an object or array does). */
function wholeJson(text: string): boolean {
  const end = text.trimEnd().at(-1);
  if (end !== '}' && end !== ']') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The frame of a translator from a chat stream into another protocol's stream: raw bytes go through the decoder
 * and the tool-call sequencer, and each piece to `translatePiece` until the translated stream has ended
 * (finished or failed), after which input is ignored. `end()` lets the subclass finish a stream whose body
 * ended without `[DONE]`.
 */
export abstract class ChatStreamTranslation {
  private readonly decoder = new ChatStreamDecoder();
  private readonly sequencer = new ToolCallSequencer();

  get malformedEvents(): number {
    return this.decoder.malformedEvents;
  }

  /** Feeds raw upstream bytes; returns the translated SSE text to write (possibly empty). */
  push(chunk: Uint8Array | string): string {
    return this.translate(this.decoder.push(chunk));
  }

  /** Call when the upstream body ended normally; returns what is left to write. */
  end(): string {
    const rest = this.translate(this.decoder.end());
    if (this.ended) return rest;
    return rest + this.translatePieces(this.sequencer.release()) + this.endOfBody();
  }

  /** True once the translated stream was finished or failed. */
  protected abstract get ended(): boolean;

  protected abstract translatePiece(piece: ChatStreamPiece): string;

  /** What to write when the body ended before `[DONE]`: the ending if a `finish_reason` came, else nothing. */
  protected abstract endOfBody(): string;

  private translate(pieces: ChatStreamPiece[]): string {
    return this.translatePieces(pieces.flatMap((piece) => this.sequencer.pass(piece)));
  }

  private translatePieces(pieces: ChatStreamPiece[]): string {
    let out = '';
    for (const piece of pieces) {
      if (this.ended) break;
      out += this.translatePiece(piece);
    }
    return out;
  }
}
