import { ExtractionAbortedError } from './extraction-errors';

/** No retry waits longer than this, whatever the base or a Retry-After header says. */
export const MAX_RETRY_DELAY_MS = 30_000;

/**
 * The pause before retry number `retry` (1 for the first): `baseMs` doubled per retry, capped, with
 * "equal jitter" (half fixed, half random) so that many callers failing together do not retry together.
 * A server's Retry-After wins when it asks for longer.
 */
export function backoffDelayMs(
  retry: number,
  baseMs: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, retry - 1));
  const jittered = exponential / 2 + (random() * exponential) / 2;
  return Math.round(Math.min(MAX_RETRY_DELAY_MS, Math.max(jittered, retryAfterMs ?? 0)));
}

/** Reads a Retry-After header given in seconds (the HTTP-date form is ignored). */
export function parseRetryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

/** Waits `ms`; rejects with ExtractionAbortedError as soon as `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new ExtractionAbortedError());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ExtractionAbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
