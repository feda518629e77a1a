import { ChatStreamTranslation, NO_VALID_CHUNK, type ChatStreamPiece } from './chat-stream-decoder';
import {
  newResponsesId,
  responseObject,
  responsesErrorEventFields,
  responsesOutcome,
  toResponsesUsage,
  type ResponseState,
} from './chat-to-responses-response';
import type { JsonObject } from '../common/json-values';
import type { OpenAIUsage } from './openai-types';
import type {
  ResponsesFunctionCall,
  ResponsesItemStatus,
  ResponsesOutputMessage,
  ResponsesOutputItem,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesStreamEvent,
} from './responses-types';
import { formatSseData } from './sse';

export interface ChatToResponsesStreamOptions {
  /** The inbound Responses request body: its settings are echoed in every `response` snapshot. */
  request: unknown;
  /** Defaults to a new `resp_...` id. */
  id?: string;
  /** Unix seconds; defaults to now. */
  createdAt?: number;
}

type OpenPart = { index: number; kind: 'output_text' | 'refusal'; text: string };

/** Distributes `Omit` over the event union, so each event can be written without its sequence number. */
type Unsequenced<T> = T extends unknown ? Omit<T, 'sequence_number'> : never;

/**
 * Turns an OpenAI `chat.completion.chunk` SSE stream into the Responses API's typed SSE events, one upstream
 * event at a time: `response.created`, `response.in_progress`, then per output item `output_item.added`,
 * `content_part.added`, `output_text.delta`... `output_item.done` (or the `function_call_arguments` events of a
 * tool call), and finally `response.completed` (or `response.incomplete` when the token limit or the content
 * filter cut the answer) carrying the whole response. Every event has a `sequence_number`.
 *
 * An in-stream error chunk becomes an `error` event and `response.failed` (see `fail`), as does a stream that ends
 * without a single readable chunk; a stream cut before `[DONE]` (or a `finish_reason` and the end of the body)
 * gets no invented ending. Parallel tool calls become one item after the other (see `ToolCallSequencer`). Never
 * throws on malformed input.
 */
export class ChatToResponsesStreamTranslator extends ChatStreamTranslation {
  private readonly request: unknown;
  private readonly id: string;
  private readonly createdAt: number;
  private model: string;
  private sequence = 0;
  private started = false;
  private status: ResponsesStatus = 'in_progress';
  private finishReason: string | null = null;
  private usage: OpenAIUsage | undefined;
  private readonly output: ResponsesOutputItem[] = [];
  private message: { outputIndex: number; item: ResponsesOutputMessage; part?: OpenPart } | undefined;
  private readonly calls = new Map<number, { outputIndex: number; item: ResponsesFunctionCall }>();
  private openCall: number | undefined;
  private readonly textParts: string[] = [];

  constructor(options: ChatToResponsesStreamOptions) {
    super();
    this.request = options.request;
    this.id = options.id ?? newResponsesId('resp');
    this.createdAt = options.createdAt ?? Math.floor(Date.now() / 1000);
    const model = (options.request as { model?: unknown } | null)?.model;
    this.model = typeof model === 'string' ? model : '';
  }

  /** The output text written so far. */
  get text(): string {
    return this.textParts.join('');
  }

  /** True once `response.completed` was written. A `response.incomplete` or `response.failed` end is not. */
  get completed(): boolean {
    return this.status === 'completed';
  }

  /** True once the answer ended as the upstream ended it: `response.completed`, or `response.incomplete` at a limit. */
  get answered(): boolean {
    return this.status === 'completed' || this.status === 'incomplete';
  }

  /** The response's status: `in_progress` until one of `completed`, `incomplete` or `failed` was written. */
  get responseStatus(): ResponsesStatus {
    return this.status;
  }

  get responseId(): string {
    return this.id;
  }

  /**
   * What to write when the upstream broke off mid-stream (or sent an error chunk): an `error` event, which
   * clients surface as an error, then `response.failed`; empty when the stream already ended.
   */
  fail(message: string, code = 'server_error', type = 'server_error'): string {
    if (this.status !== 'in_progress') return '';
    const out = this.ensureStarted();
    this.status = 'failed';
    return (
      out +
      this.emit({ type: 'error', ...responsesErrorEventFields({ message, code, type }) }) +
      this.lifecycle('response.failed', { error: { code, message } })
    );
  }

  protected get ended(): boolean {
    return this.status !== 'in_progress';
  }

  protected endOfBody(): string {
    return this.finishReason !== null ? this.finishResponse() : '';
  }

  protected translatePiece(piece: ChatStreamPiece): string {
    switch (piece.type) {
      case 'start':
        if (piece.model) this.model = piece.model;
        return this.ensureStarted();
      case 'text':
      case 'refusal':
        return (
          this.ensureStarted() +
          this.closeCall() +
          this.contentDelta(piece.type === 'text' ? 'output_text' : 'refusal', piece.text)
        );
      case 'tool-call':
        return (
          this.ensureStarted() +
          this.closeMessage() +
          this.closeCall() +
          this.openToolCall(piece.index, piece.id, piece.name)
        );
      case 'tool-arguments':
        return this.toolArguments(piece.index, piece.fragment);
      case 'finish':
        this.finishReason = piece.reason;
        return this.closeMessage() + this.closeCall();
      case 'usage':
        this.usage = piece.usage;
        return '';
      case 'done':
        if (!this.started) return this.fail(NO_VALID_CHUNK, 'upstream_invalid_response');
        return this.finishResponse();
      case 'error':
        return this.upstreamError(piece.error);
    }
  }

  private ensureStarted(): string {
    if (this.started) return '';
    this.started = true;
    return this.lifecycle('response.created') + this.lifecycle('response.in_progress');
  }

  private contentDelta(kind: OpenPart['kind'], delta: string): string {
    let out = '';
    if (!this.message) {
      const outputIndex = this.output.length;
      const item: ResponsesOutputMessage = {
        type: 'message',
        id: newResponsesId('msg'),
        role: 'assistant',
        status: 'in_progress',
        content: [],
      };
      this.output.push(item);
      this.message = { outputIndex, item };
      out += this.emit({ type: 'response.output_item.added', output_index: outputIndex, item: copy(item) });
    }
    const message = this.message;
    if (message.part?.kind !== kind) {
      out += this.closePart();
      const part: OpenPart = { index: message.item.content.length, kind, text: '' };
      message.part = part;
      message.item.content.push(partSnapshot(part));
      out += this.emit({
        type: 'response.content_part.added',
        ...this.partPlace(part),
        part: partSnapshot(part),
      });
    }
    const part = message.part;
    part.text += delta;
    message.item.content[part.index] = partSnapshot(part);
    if (kind === 'output_text') {
      this.textParts.push(delta);
      return (
        out + this.emit({ type: 'response.output_text.delta', ...this.partPlace(part), delta, logprobs: [] })
      );
    }
    return out + this.emit({ type: 'response.refusal.delta', ...this.partPlace(part), delta });
  }

  private partPlace(part: OpenPart): { item_id: string; output_index: number; content_index: number } {
    const message = this.message as NonNullable<typeof this.message>;
    return { item_id: message.item.id, output_index: message.outputIndex, content_index: part.index };
  }

  private closePart(): string {
    const part = this.message?.part;
    if (!this.message || !part) return '';
    const place = this.partPlace(part);
    this.message.part = undefined;
    const done =
      part.kind === 'output_text'
        ? this.emit({ type: 'response.output_text.done', ...place, text: part.text, logprobs: [] })
        : this.emit({ type: 'response.refusal.done', ...place, refusal: part.text });
    return done + this.emit({ type: 'response.content_part.done', ...place, part: partSnapshot(part) });
  }

  private closeMessage(): string {
    if (!this.message) return '';
    const out = this.closePart();
    const { item, outputIndex } = this.message;
    this.message = undefined;
    item.status = this.itemStatus();
    return (
      out + this.emit({ type: 'response.output_item.done', output_index: outputIndex, item: copy(item) })
    );
  }

  private openToolCall(toolIndex: number, callId: string, name: string): string {
    const outputIndex = this.output.length;
    const item: ResponsesFunctionCall = {
      type: 'function_call',
      id: newResponsesId('fc'),
      call_id: callId,
      name,
      arguments: '',
      status: 'in_progress',
    };
    this.output.push(item);
    this.calls.set(toolIndex, { outputIndex, item });
    this.openCall = toolIndex;
    return this.emit({ type: 'response.output_item.added', output_index: outputIndex, item: copy(item) });
  }

  /** Arguments of a call already closed (interleaved calls) still reach its item, by its output index. */
  private toolArguments(toolIndex: number, delta: string): string {
    const call = this.calls.get(toolIndex);
    if (!call) return '';
    call.item.arguments += delta;
    return this.emit({
      type: 'response.function_call_arguments.delta',
      item_id: call.item.id ?? '',
      output_index: call.outputIndex,
      delta,
    });
  }

  private closeCall(): string {
    const call = this.openCall === undefined ? undefined : this.calls.get(this.openCall);
    this.openCall = undefined;
    if (!call) return '';
    const { item, outputIndex } = call;
    item.status = this.itemStatus();
    return (
      this.emit({
        type: 'response.function_call_arguments.done',
        item_id: item.id ?? '',
        output_index: outputIndex,
        name: item.name,
        arguments: item.arguments,
      }) + this.emit({ type: 'response.output_item.done', output_index: outputIndex, item: copy(item) })
    );
  }

  private itemStatus(): ResponsesItemStatus {
    return responsesOutcome(this.finishReason).status === 'completed' ? 'completed' : 'incomplete';
  }

  private finishResponse(): string {
    const out = this.closeMessage() + this.closeCall();
    const outcome = responsesOutcome(this.finishReason);
    this.status = outcome.status;
    const type = outcome.status === 'completed' ? 'response.completed' : 'response.incomplete';
    return (
      out +
      this.lifecycle(type, {
        incompleteDetails: outcome.incomplete_details,
        usage: toResponsesUsage(this.usage),
      })
    );
  }

  private upstreamError(error: JsonObject): string {
    const message =
      typeof error.message === 'string' && error.message ? error.message : 'upstream stream error';
    const code = typeof error.code === 'string' && error.code ? error.code : 'server_error';
    const type = typeof error.type === 'string' && error.type ? error.type : 'server_error';
    return this.fail(message, code, type);
  }

  private lifecycle(
    type:
      | 'response.created'
      | 'response.in_progress'
      | 'response.completed'
      | 'response.incomplete'
      | 'response.failed',
    state: Partial<ResponseState> = {},
  ): string {
    const response: ResponsesResponse = responseObject(this.request, {
      id: this.id,
      createdAt: this.createdAt,
      model: this.model,
      status: this.status,
      output: this.output,
      usage: null,
      ...state,
    });
    return this.emit({ type, response });
  }

  private emit(event: Unsequenced<ResponsesStreamEvent>): string {
    const { type, ...fields } = event;
    const sequenced = { type, sequence_number: this.sequence++, ...fields };
    return formatSseData(JSON.stringify(sequenced), type);
  }
}

function partSnapshot(part: OpenPart): ResponsesOutputMessage['content'][number] {
  return part.kind === 'output_text'
    ? { type: 'output_text', text: part.text, annotations: [], logprobs: [] }
    : { type: 'refusal', refusal: part.text };
}

function copy<T>(value: T): T {
  return structuredClone(value);
}
