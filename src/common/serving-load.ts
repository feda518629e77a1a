import { performance } from 'node:perf_hooks';

/** The time with answers in flight that the event loop's utilisation is measured over. */
const SAMPLE_MS = 200;
/** How often work that yields looks again whether the process is still busy. */
const POLL_MS = 50;

/** The event loop's time so far, in ms: spent working (`active`) and waiting for events (`idle`). */
export interface LoopTime {
  active: number;
  idle: number;
}

/** The process's own event loop (`performance.eventLoopUtilization`). */
const processLoopTime = (): LoopTime => performance.eventLoopUtilization();

/**
 * Whether the process is busy answering: answers in flight while its event loop was busy at least
 * `threshold` of the time answers were in flight, over the last SAMPLE_MS of such time. Background
 * work that can wait without losing anything (extraction: its messages are stored) yields while it
 * is, so that it does not slow answers down; it goes on as soon as no answer is in flight, the loop
 * has time again, or its deadline passed (so learning lags load by a bounded time and never starves).
 *
 * Time with no answer in flight is left out of the measure: a burst that follows a quiet spell is
 * judged by how busy answering keeps the loop, not diluted by the quiet before it. Until a burst's
 * first sample is complete, the last one stands.
 */
export class ServingLoad {
  private answering = 0;
  /** The loop's counters when answers last went in flight (from none); null while none are. */
  private openedAt: LoopTime | null = null;
  /** Loop time, active and idle, with answers in flight in the sample being taken, before `openedAt`. */
  private active = 0;
  private idle = 0;
  private utilization = 0;

  /**
   * `threshold` 1 never counts the process busy; 0 counts it busy whenever an answer is in flight.
   * `loopTime` reads the event loop's counters (tests give a loop of their own).
   */
  constructor(
    private readonly threshold: number,
    private readonly loopTime: () => LoopTime = processLoopTime,
  ) {}

  /** Marks an answer in flight; the returned function ends it (once, however often it is called). */
  begin(): () => void {
    if (this.answering++ === 0) this.openedAt = this.loopTime();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.answering === 0) this.close();
    };
  }

  get inFlight(): number {
    return this.answering;
  }

  busy(): boolean {
    if (this.answering === 0 || this.threshold >= 1) return false;
    const now = this.loopTime();
    const openedAt = this.openedAt ?? now;
    const active = this.active + now.active - openedAt.active;
    const idle = this.idle + now.idle - openedAt.idle;
    if (active + idle >= SAMPLE_MS) {
      this.utilization = active / (active + idle);
      this.active = 0;
      this.idle = 0;
      this.openedAt = now;
    }
    return this.utilization >= this.threshold;
  }

  /** Resolves when the process is not busy, `deadline` (a `performance.now()` time) has passed, or `signal` aborted. */
  async yieldWhileBusy(deadline: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && performance.now() < deadline && this.busy()) {
      await pause(Math.min(POLL_MS, Math.max(1, deadline - performance.now())), signal);
    }
  }

  /** The last answer ended: the time it was in flight is kept for the sample. */
  private close(): void {
    if (this.openedAt === null) return;
    const now = this.loopTime();
    this.active += now.active - this.openedAt.active;
    this.idle += now.idle - this.openedAt.idle;
    this.openedAt = null;
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
