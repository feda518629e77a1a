import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';

/** At shutdown, how long work still running after its response may take before it is left behind. */
export const SHUTDOWN_DRAIN_MS = 10_000;

/**
 * Work that runs after a response has been sent (recording a turn, extraction). It is tracked so that
 * shutdown and tests can wait until it has drained, and its errors are logged, never thrown at a client.
 */
@Injectable()
export class BackgroundWork implements BeforeApplicationShutdown {
  private readonly logger = new Logger('BackgroundWork');
  private readonly running = new Set<Promise<void>>();

  run(name: string, task: () => Promise<unknown>): void {
    const promise: Promise<void> = Promise.resolve()
      .then(task)
      .then(
        () => undefined,
        (error: unknown) => {
          this.logger.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
        },
      )
      .finally(() => this.running.delete(promise));
    this.running.add(promise);
  }

  /**
   * Runs `task` now and then every `intervalMs` (never when 0), as background work; the timer does not
   * keep the process alive. Returns what stops the repeats.
   */
  repeat(name: string, intervalMs: number, task: () => Promise<unknown>): () => void {
    this.run(name, task);
    if (intervalMs <= 0) return () => undefined;
    const timer = setInterval(() => this.run(name, task), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  get pending(): number {
    return this.running.size;
  }

  /** Resolves when no background work is running, including work started by work that finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /**
   * Runs after the modules that start work have stopped (the extraction worker aborts its runs first:
   * this module is global, so its hook comes last) and before the database closes. Work that does not
   * finish in time is left; messages it did not extract stay pending for the next sweep.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), SHUTDOWN_DRAIN_MS);
    });
    const abandoned = await Promise.race([this.drain().then(() => false), timedOut]);
    clearTimeout(timer);
    if (abandoned) {
      this.logger.warn(`${this.running.size} background task(s) still running at shutdown were left behind`);
    }
  }
}
