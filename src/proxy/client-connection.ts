import type { Request, Response } from 'express';

/**
 * The client's side of a proxied exchange. `signal` aborts when the client goes away before the
 * answer is complete: it exists from the start of the handler (and fires at once when the client left
 * while the body was read), so the question's embedding, the context query's wait and the upstream call
 * are all cancelled with it.
 */
export class ClientConnection {
  private readonly controller = new AbortController();

  constructor(
    readonly req: Request,
    readonly res: Response,
  ) {
    const abortIfUnfinished = () => {
      if (!res.writableFinished) this.controller.abort(new ClientGoneError());
    };
    res.once('close', abortIfUnfinished);
    if (res.destroyed || req.socket.destroyed) abortIfUnfinished();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get gone(): boolean {
    return this.controller.signal.aborted;
  }

  /** Cuts the client off (it stopped reading); the exchange is aborted with it. */
  cut(): void {
    this.controller.abort(new ClientGoneError());
    this.res.destroy();
  }
}

export class ClientGoneError extends Error {
  constructor() {
    super('the client went away before the answer was complete');
    this.name = 'ClientGoneError';
  }
}

export type DrainOutcome = 'drained' | 'closed' | 'timeout';

/**
 * Waits until the client's buffer has room again, it goes away, or `timeoutMs` passes. Both listeners
 * and the timer are removed whichever comes first, so a slow reader leaves nothing behind.
 */
export function waitForDrain(res: Response, timeoutMs: number): Promise<DrainOutcome> {
  return new Promise((resolve) => {
    const settle = (outcome: DrainOutcome) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      clearTimeout(timer);
      resolve(outcome);
    };
    const onDrain = () => settle('drained');
    const onClose = () => settle('closed');
    res.on('drain', onDrain);
    res.on('close', onClose);
    const timer = setTimeout(() => settle('timeout'), timeoutMs);
  });
}
