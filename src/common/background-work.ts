import { Injectable, Logger } from '@nestjs/common';

/**
 * Work that runs after a response has been sent (recording a turn, extraction). It is tracked so that
 * shutdown and tests can wait until it has drained, and its errors are logged, never thrown at a client.
 */
@Injectable()
export class BackgroundWork {
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

  get pending(): number {
    return this.running.size;
  }

  /** Resolves when no background work is running, including work started by work that finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
