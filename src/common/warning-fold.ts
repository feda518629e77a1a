import { Logger } from '@nestjs/common';

/** The interval over which repeated warnings of one cause are folded into one line and a count. */
export const WARNING_FOLD_MS = 10_000;

/**
 * Folds repeated warnings: the first warning of a cause in an interval is written, the next ones of
 * that cause until the interval ends are only counted (their callers write them at a lower level, or
 * not at all), and when it ends one line says how many there were. A database outage under load
 * otherwise wrote two warnings per refused request, tens of thousands a second.
 */
export class WarningFold {
  private readonly repeats = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly summarize: (cause: string, count: number, intervalMs: number) => void,
  ) {}

  /** True when this warning is the first of its cause in the interval, to be written as a warning. */
  admit(cause: string): boolean {
    const seen = this.repeats.get(cause);
    if (seen !== undefined) {
      this.repeats.set(cause, seen + 1);
      return false;
    }
    this.repeats.set(cause, 0);
    this.timer ??= setTimeout(() => this.endInterval(), this.intervalMs).unref();
    return true;
  }

  private endInterval(): void {
    this.timer = undefined;
    const ended = [...this.repeats];
    this.repeats.clear();
    for (const [cause, count] of ended) if (count > 0) this.summarize(cause, count, this.intervalMs);
  }
}

const summaryLogger = new Logger('RepeatedWarnings');

/** The process's fold of the warnings that come once per request. */
export const repeatedWarnings = new WarningFold(WARNING_FOLD_MS, (cause, count, intervalMs) =>
  summaryLogger.warn(`${cause}: ${count} more in the last ${intervalMs / 1000} s`),
);
