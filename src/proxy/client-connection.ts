import type { Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import type { UpstreamCancellation } from '../upstream/upstream-client';

/**
 * The client's side of a proxied exchange. It is `gone` when the client goes away before the answer is
 * complete (at once when the client left while the body was read), which cancels the upstream call
 * (`cancellation`, the emitter undici takes) and `signal`, which the question's embedding is given.
 * An AbortSignal and its listener cost a chat about 2 % of its CPU, so `signal` exists only once asked for.
 */
export class ClientConnection {
  readonly cancellation = new ClientCancellation();
  private controller: AbortController | null = null;

  constructor(
    readonly req: Request,
    readonly res: Response,
  ) {
    const abortIfUnfinished = () => {
      if (!res.writableFinished) this.abort();
    };
    res.once('close', abortIfUnfinished);
    if (res.destroyed || req.socket.destroyed) abortIfUnfinished();
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.cancellation.aborted) this.controller.abort(this.cancellation.reason);
    }
    return this.controller.signal;
  }

  get gone(): boolean {
    return this.cancellation.aborted;
  }

  /** Cuts the client off (it stopped reading); the exchange is aborted with it. */
  cut(): void {
    this.abort();
    this.res.destroy();
  }

  private abort(): void {
    if (this.cancellation.aborted) return;
    const reason = new ClientGoneError();
    this.cancellation.abort(reason);
    this.controller?.abort(reason);
  }
}

/** Aborted once, with a reason, and says so with an `abort` event: what undici reads of a signal. */
class ClientCancellation extends EventEmitter implements UpstreamCancellation {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
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
