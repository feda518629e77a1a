/** Extraction could not produce a result (the LLM failed after its retries, or refused the request). */
export class ExtractionFailedError extends Error {
  constructor(
    message: string,
    /** True when trying again later may succeed (timeouts, 5xx, 429, unusable answers). */
    readonly transient: boolean,
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
