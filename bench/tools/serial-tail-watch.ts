import { writeFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { Client } from 'pg';

/**
 * Preloaded into the service by `serial-tail` (`node -r`): records, on the monotonic clock in µs that
 * `process.hrtime` reads in every process, when each `pg` query ran (from the call to its answer, with
 * the start of its text or its statement's name) and when each GC pause ran. SIGUSR2 writes them to
 * SERIAL_TAIL_WATCH_FILE as JSON. A measuring aid only: the service never loads it.
 */
export interface WatchedSpan {
  startUs: number;
  endUs: number;
  what: string;
}

const file = process.env.SERIAL_TAIL_WATCH_FILE;
if (!file) throw new Error('serial-tail-watch: SERIAL_TAIL_WATCH_FILE is not set');

const queries: WatchedSpan[] = [];
const pauses: WatchedSpan[] = [];
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
// a performance entry's time is ms since the time origin; this turns it into the hrtime clock's µs
const originUs = nowUs() - performance.now() * 1000;

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const startUs = originUs + entry.startTime * 1000;
    pauses.push({ startUs, endUs: startUs + entry.duration * 1000, what: 'gc' });
  }
}).observe({ entryTypes: ['gc'] });

type Query = (this: Client, ...args: unknown[]) => unknown;
const prototype = Client.prototype as unknown as { query: Query };
const query = prototype.query;
prototype.query = function watchedQuery(this: Client, ...args) {
  const startUs = nowUs();
  const config = args[0] as string | { name?: string; text?: string } | undefined;
  const what = (typeof config === 'string' ? config : (config?.name ?? config?.text ?? '?'))
    .replace(/\s+/g, ' ')
    .slice(0, 60);
  const result = query.apply(this, args);
  const done = () => queries.push({ startUs, endUs: nowUs(), what });
  if (result instanceof Promise) result.then(done, done);
  return result;
};

process.on('SIGUSR2', () => writeFileSync(file, JSON.stringify({ queries, pauses })));
