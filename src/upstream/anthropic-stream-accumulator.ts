import { isPlainObject, parseJsonObject } from '../common/json-values';
import { SseEventReader, type SseEvent } from './sse';

/**
 * Reads the assistant text of an Anthropic Messages stream on the side while the relay forwards its bytes
 * untouched. The answer is complete only after `message_stop` with no `error` event before it; nothing after
 * either is read. Never throws: events it cannot read are counted in `malformedEvents`.
 */
export class AnthropicStreamAccumulator extends SseEventReader {
  private readonly parts: string[] = [];
  private stopped = false;
  private errorValue: unknown;
  private stopReasonValue: string | null = null;
  private messageId: string | undefined;
  private malformed = 0;

  pushEvent(event: SseEvent): void {
    if (this.stopped || this.errorValue !== undefined) return;
    const payload = parseJsonObject(event.data);
    const type = typeof payload?.type === 'string' ? payload.type : event.event;
    if (!payload || !type) {
      this.malformed++;
      return;
    }
    switch (type) {
      case 'message_start':
        if (isPlainObject(payload.message) && typeof payload.message.id === 'string') {
          this.messageId = payload.message.id;
        }
        return;
      case 'content_block_start': {
        const block = payload.content_block;
        if (isPlainObject(block) && block.type === 'text' && typeof block.text === 'string') {
          this.parts.push(block.text);
        }
        return;
      }
      case 'content_block_delta': {
        const delta = payload.delta;
        if (isPlainObject(delta) && delta.type === 'text_delta' && typeof delta.text === 'string') {
          this.parts.push(delta.text);
        }
        return;
      }
      case 'message_delta':
        if (isPlainObject(payload.delta) && typeof payload.delta.stop_reason === 'string') {
          this.stopReasonValue = payload.delta.stop_reason;
        }
        return;
      case 'message_stop':
        this.stopped = true;
        return;
      case 'error':
        this.errorValue = payload.error ?? payload;
        return;
      default:
        return;
    }
  }

  get text(): string {
    return this.parts.join('');
  }

  /** True only after `message_stop` with no `error` event before it. */
  get completed(): boolean {
    return this.stopped && this.errorValue === undefined;
  }

  /** The `error` object of an in-stream `error` event. */
  get error(): unknown {
    return this.errorValue;
  }

  get stopReason(): string | null {
    return this.stopReasonValue;
  }

  get id(): string | undefined {
    return this.messageId;
  }

  get malformedEvents(): number {
    return this.malformed;
  }
}

/** The text of an Anthropic `message` object (its text blocks joined); null when the body is not a message. */
export function anthropicMessageText(message: unknown): string | null {
  if (!isPlainObject(message) || message.type !== 'message' || !Array.isArray(message.content)) return null;
  return (message.content as unknown[])
    .filter((block): block is { text: string } => isPlainObject(block) && block.type === 'text')
    .map((block) => (typeof block.text === 'string' ? block.text : ''))
    .join('');
}
