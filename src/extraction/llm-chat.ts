import { readTextUpTo } from '../upstream/upstream-body';
import { classifyUpstreamFailure, UpstreamClient } from '../upstream/upstream-client';
import { isPlainObject } from '../common/json-values';
import { ExtractionAbortedError } from './extraction-errors';
import { parseRetryAfterMs } from './retry-backoff';

/** An answer larger than this is not a profile extraction; it is cut off and treated as unusable. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface LlmChatRequest {
  messages: Array<{ role: 'system' | 'user'; content: string }>;
  response_format?: unknown;
}

/** What became of one chat completion call, sorted by what the caller should do next. */
export type LlmOutcome =
  | { kind: 'answer'; content: string | null; refusal: string | null }
  /** 400, 415 or 422: the provider refused something in the request, perhaps the response_format. */
  | { kind: 'rejected'; status: number; detail: string }
  /** May work when tried again: timeouts, connection failures, 408/409/425/429, 5xx, a malformed body. */
  | { kind: 'transient'; reason: string; retryAfterMs?: number }
  /** Will not work by trying again: 401, 403, 404 and the like. */
  | { kind: 'failed'; reason: string };

const REJECTED_STATUSES = new Set([400, 415, 422]);
const TRANSIENT_STATUSES = new Set([408, 409, 425, 429]);

/**
 * One OpenAI-compatible, non-streaming chat completion against the extraction LLM, bounded by a total
 * timeout. Never throws for the provider's failures (they are classified); throws ExtractionAbortedError
 * when `signal` fires.
 */
export class LlmChat {
  constructor(
    private readonly client: UpstreamClient,
    private readonly options: { model: string; timeoutMs: number },
  ) {}

  async complete(request: LlmChatRequest, signal: AbortSignal): Promise<LlmOutcome> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    try {
      const response = await this.client.send({
        method: 'POST',
        path: '/chat/completions',
        body: JSON.stringify({ model: this.options.model, ...request }),
        signal: combined,
      });
      const text = await readTextUpTo(response.body, MAX_ANSWER_BYTES);
      if (response.status >= 200 && response.status < 300) return readAnswer(text);
      const detail = `HTTP ${response.status}: ${text.slice(0, 300)}`;
      if (REJECTED_STATUSES.has(response.status))
        return { kind: 'rejected', status: response.status, detail };
      if (TRANSIENT_STATUSES.has(response.status) || response.status >= 500) {
        return {
          kind: 'transient',
          reason: detail,
          retryAfterMs: parseRetryAfterMs(response.headers['retry-after']),
        };
      }
      return { kind: 'failed', reason: detail };
    } catch (error) {
      if (signal.aborted) throw new ExtractionAbortedError();
      if (timeout.aborted)
        return { kind: 'transient', reason: `no answer within ${this.options.timeoutMs} ms` };
      const failure = classifyUpstreamFailure(error);
      if (failure) return { kind: 'transient', reason: failure.message };
      throw error;
    }
  }
}

function readAnswer(text: string): LlmOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'transient', reason: 'the completion is not JSON' };
  }
  const choices = isPlainObject(parsed) ? parsed.choices : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = isPlainObject(first) ? first.message : undefined;
  if (!isPlainObject(message)) return { kind: 'transient', reason: 'the completion has no message' };
  return {
    kind: 'answer',
    content: typeof message.content === 'string' ? message.content : null,
    refusal: typeof message.refusal === 'string' ? message.refusal : null,
  };
}
