import { performance } from 'node:perf_hooks';

/** The shortest span the event loop's utilisation is measured over. */
const SAMPLE_MS = 200;
/** How often work that yields looks again whether the process is still busy. */
const POLL_MS = 50;

type LoopSample = ReturnType<typeof performance.eventLoopUtilization>;

/**
 * Whether the process is busy answering: answers in flight while its event loop was busy at least
 * `threshold` of the last sample (at least SAMPLE_MS long). Background work that can wait without
 * losing anything (extraction: its messages are stored) yields while it is, so that it does not slow
 * answers down; it goes on as soon as no answer is in flight, the loop has time again, or its
 * deadline passed (so learning lags load by a bounded time and never starves).
 */
export class ServingLoad {
  private answering = 0;
  private sample: LoopSample = performance.eventLoopUtilization();
  private sampledAt = performance.now();
  private utilization = 0;

  /** `threshold` 1 never counts the process busy; 0 counts it busy whenever an answer is in flight. */
  constructor(private readonly threshold: number) {}

  /** Marks an answer in flight; the returned function ends it (once, however often it is called). */
  begin(): () => void {
    this.answering++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.answering--;
    };
  }

  get inFlight(): number {
    return this.answering;
  }

  busy(): boolean {
    if (this.answering === 0 || this.threshold >= 1) return false;
    const now = performance.now();
    if (now - this.sampledAt >= SAMPLE_MS) {
      const current = performance.eventLoopUtilization();
      this.utilization = performance.eventLoopUtilization(current, this.sample).utilization;
      this.sample = current;
      this.sampledAt = now;
    }
    return this.utilization >= this.threshold;
  }

  /** Resolves when the process is not busy, `deadline` (a `performance.now()` time) has passed, or `signal` aborted. */
  async yieldWhileBusy(deadline: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && performance.now() < deadline && this.busy()) {
      await pause(Math.min(POLL_MS, Math.max(1, deadline - performance.now())), signal);
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
