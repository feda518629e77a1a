import { ExtractionAbortedError } from './extraction-errors';
import { backoffDelayMs, MAX_RETRY_DELAY_MS, parseRetryAfterMs, sleep } from './retry-backoff';

describe('backoffDelayMs', () => {
  it('doubles per retry with half of it random, capped, and honours a longer Retry-After', () => {
    expect(backoffDelayMs(1, 100, undefined, () => 0)).toBe(50);
    expect(backoffDelayMs(1, 100, undefined, () => 1)).toBe(100);
    expect(backoffDelayMs(3, 100, undefined, () => 1)).toBe(400);
    expect(backoffDelayMs(30, 100, undefined, () => 1)).toBe(MAX_RETRY_DELAY_MS);
    expect(backoffDelayMs(1, 100, 2_000, () => 0)).toBe(2_000);
    expect(backoffDelayMs(1, 100, 3_600_000, () => 0)).toBe(MAX_RETRY_DELAY_MS);
    expect(backoffDelayMs(2, 0, undefined, () => 1)).toBe(0);
  });

  it('reads Retry-After seconds and ignores dates', () => {
    expect(parseRetryAfterMs('2')).toBe(2_000);
    expect(parseRetryAfterMs(['1.5'])).toBe(1_500);
    expect(parseRetryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
  });
});

describe('sleep', () => {
  it('stops early with ExtractionAbortedError when aborted', async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(ExtractionAbortedError);
    await expect(sleep(1, controller.signal)).rejects.toBeInstanceOf(ExtractionAbortedError);
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});
