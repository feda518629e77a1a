/**
 * Why the LLM's extraction failed: its answers could not be read as the JSON asked for, the provider
 * rejected the request (400/422 after every response format), the call failed for good (another 4xx),
 * or the provider was unavailable (timeout, connection, 429, 5xx).
 */
export const EXTRACTION_FAILURE_CAUSES = [
  'unusable_answer',
  'rejected',
  'call_failed',
  'unavailable',
] as const;
export type ExtractionFailureCause = (typeof EXTRACTION_FAILURE_CAUSES)[number];

/** Extraction could not produce a result (the LLM failed after its retries, or refused the request). */
export class ExtractionFailedError extends Error {
  constructor(
    message: string,
    /** True when trying again later may succeed (timeouts, 5xx, 429, unusable answers). */
    readonly transient: boolean,
    readonly failureCause: ExtractionFailureCause,
  ) {
    super(message);
    this.name = 'ExtractionFailedError';
  }
}

/** The work was stopped because the service is shutting down; it stays pending and is not a failure. */
export class ExtractionAbortedError extends Error {
  constructor() {
    super('extraction stopped: the service is shutting down');
    this.name = 'ExtractionAbortedError';
  }
}
