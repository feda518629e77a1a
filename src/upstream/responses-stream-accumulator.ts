import { isPlainObject, parseJsonObject } from '../common/json-values';
import { SseEventReader, type SseEvent } from './sse';

/** How a Responses stream ended: `cut` means no terminal event arrived (yet). */
export type ResponsesStreamOutcome = 'completed' | 'incomplete' | 'failed' | 'error' | 'cut';

const TERMINAL_EVENTS: Record<string, ResponsesStreamOutcome> = {
  'response.completed': 'completed',
  'response.incomplete': 'incomplete',
  'response.failed': 'failed',
  error: 'error',
};

/**
 * Reads the output text of a Responses API stream on the side while the relay forwards its bytes untouched.
 * The answer is complete only after `response.completed`, and answered after it or `response.incomplete` (ended
 * at a limit); `response.failed`, an `error` event, or a stream that stops before any of them is neither. The first terminal event decides; later events are
 * ignored. Never throws: events it cannot read are counted in `malformedEvents`.
 */
export class ResponsesStreamAccumulator extends SseEventReader {
  private readonly deltas: string[] = [];
  private finalText: string | null = null;
  private ending: ResponsesStreamOutcome = 'cut';
  private errorValue: unknown;
  private responseId: string | undefined;
  private lastSequence: number | undefined;
  private malformed = 0;

  pushEvent(event: SseEvent): void {
    if (this.ending !== 'cut') return;
    const payload = parseJsonObject(event.data);
    const type = typeof payload?.type === 'string' ? payload.type : event.event;
    if (!payload || !type) {
      this.malformed++;
      return;
    }
    if (typeof payload.sequence_number === 'number') this.lastSequence = payload.sequence_number;
    const response = isPlainObject(payload.response) ? payload.response : undefined;
    if (typeof response?.id === 'string') this.responseId ??= response.id;
    if (type === 'response.output_text.delta' && typeof payload.delta === 'string') {
      this.deltas.push(payload.delta);
      return;
    }
    const outcome = TERMINAL_EVENTS[type];
    if (outcome === undefined) return;
    this.ending = outcome;
    if (outcome === 'completed' || outcome === 'incomplete') {
      this.finalText = response ? responseOutputText(response) : null;
    }
    if (outcome === 'failed') this.errorValue = response?.error ?? payload.error;
    if (outcome === 'error') this.errorValue = payload.error ?? payload;
  }

  /** The output text: the completed response's own, else the deltas received so far. */
  get text(): string {
    return this.finalText ?? this.deltas.join('');
  }

  /** True only after `response.completed` (with no failure before it). */
  get completed(): boolean {
    return this.ending === 'completed';
  }

  /** True after `response.completed`, or `response.incomplete` (an answer the upstream ended at a limit). */
  get answered(): boolean {
    return this.ending === 'completed' || this.ending === 'incomplete';
  }

  get outcome(): ResponsesStreamOutcome {
    return this.ending;
  }

  /** The error of a `response.failed` or `error` event. */
  get error(): unknown {
    return this.errorValue;
  }

  get id(): string | undefined {
    return this.responseId;
  }

  /** The last `sequence_number` seen, so an event the proxy adds can continue the numbering. */
  get lastSequenceNumber(): number | undefined {
    return this.lastSequence;
  }

  get malformedEvents(): number {
    return this.malformed;
  }
}

/**
 * The output text of a `response` object: the `output_text` parts of its assistant `message` items (parts
 * joined as they are, items by a newline). Null unless the upstream ended the answer: `completed`, or
 * `incomplete` (cut at the token limit or by the content filter, as a chat `finish_reason` of `length` is); a
 * `failed`, `in_progress` or `queued` response is not an answer to learn from. A response that leaves out
 * `status` counts as ended when it reports no error.
 */
export function responseOutputText(response: unknown): string | null {
  if (!isPlainObject(response) || !Array.isArray(response.output)) return null;
  const ended =
    response.status === 'completed' ||
    response.status === 'incomplete' ||
    (response.status === undefined && !response.error);
  if (!ended) return null;
  const texts: string[] = [];
  for (const item of response.output as unknown[]) {
    if (!isPlainObject(item) || item.type !== 'message' || !Array.isArray(item.content)) continue;
    texts.push(
      (item.content as unknown[])
        .filter((part): part is { text: string } => isPlainObject(part) && part.type === 'output_text')
        .map((part) => (typeof part.text === 'string' ? part.text : ''))
        .join(''),
    );
  }
  return texts.filter((text) => text.length > 0).join('\n');
}
