import { Pool } from 'undici';

export interface LoadResult {
  name: string;
  requests: number;
  concurrency: number;
  seconds: number;
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * Sends `requests` requests from `concurrency` workers over keep-alive connections and measures each
 * one's latency. A non-2xx answer counts as an error.
 */
export async function runLoad(
  baseUrl: string,
  name: string,
  options: {
    requests: number;
    concurrency: number;
    next: (index: number) => RequestSpec;
    /** Measure until the first body chunk (time to first chunk of a stream) instead of the whole body. */
    firstChunk?: boolean;
  },
): Promise<LoadResult> {
  const pool = new Pool(baseUrl, { connections: options.concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (issued < options.requests) {
      const spec = options.next(issued++);
      const t0 = process.hrtime.bigint();
      const res = await pool.request({
        method: spec.method,
        path: spec.path,
        headers: {
          ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...spec.headers,
        },
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      });
      if (options.firstChunk) {
        const chunks = res.body[Symbol.asyncIterator]();
        await chunks.next();
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        while (!(await chunks.next()).done);
      } else {
        await res.body.dump();
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      if (res.statusCode >= 300) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: latencies.length,
    concurrency: options.concurrency,
    seconds: round(seconds),
    throughput: round(latencies.length / seconds),
    p50Ms: round(percentile(latencies, 0.5)),
    p99Ms: round(percentile(latencies, 0.99)),
    errors,
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export function round(value: number): number {
  return Math.round(value * 100) / 100;
}
