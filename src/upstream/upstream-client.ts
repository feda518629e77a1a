import { Pool, type Dispatcher } from 'undici';
import type { HeaderMap } from './relay-headers';
import { classifyUpstreamFailure, UpstreamPathError, UpstreamTimeoutError } from './upstream-errors';
import type { UpstreamObservation, UpstreamObserver } from '../metrics/upstream-observation';

export { relayHeaders, type HeaderMap, type RelayHeadersOptions } from './relay-headers';
export {
  classifyUpstreamFailure,
  UpstreamError,
  UpstreamPathError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './upstream-errors';

export type UpstreamProvider = 'openai' | 'anthropic';

export const ANTHROPIC_API_VERSION = '2023-06-01';

export interface UpstreamClientOptions {
  /** Provider API root including its version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** Maximum wait for response headers (and for the TCP connect). */
  timeoutMs: number;
  /** Maximum silence between two body chunks; undici's bodyTimeout is refreshed on every chunk. */
  streamIdleTimeoutMs: number;
  /** Decides the auth headers; defaults to 'openai'. */
  provider?: UpstreamProvider;
  /** Upper bound on pooled keep-alive sockets; streams hold one each for their whole duration. */
  maxConnections?: number;
  /** How long an idle keep-alive socket is kept (undici caps it by the server's Keep-Alive hint). */
  keepAliveTimeoutMs?: number;
  /** Told the outcome and latency of every request (metrics). */
  observer?: UpstreamObserver;
}

/** One request as an observer sees it: the status when headers arrived, or how it failed before them. */
/**
 * What cancels a call besides an AbortSignal: an emitter of `abort` that says whether it was aborted and
 * why, which undici takes as a signal (the proxy's client connection, cheaper than an AbortSignal).
 */
export interface UpstreamCancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  on(event: 'abort', listener: () => void): unknown;
  once(event: 'abort', listener: () => void): unknown;
  removeListener(event: 'abort', listener: () => void): unknown;
}

export interface UpstreamRequest {
  method: 'GET' | 'POST';
  /** Appended to the base URL path, e.g. `/chat/completions`. A query string is allowed. */
  path: string;
  body?: string | Buffer;
  /** Per-request key; wins over the configured one. */
  apiKey?: string;
  signal?: AbortSignal | UpstreamCancellation;
  /** Extra request headers (e.g. `accept`); auth and hop-by-hop headers are ignored here. */
  headers?: Record<string, string>;
}

/** undici's body stream; it yields Buffers as long as nobody calls `setEncoding`. */
export type UpstreamBody = AsyncIterable<Buffer> & Dispatcher.ResponseData['body'];

export interface UpstreamResponse {
  status: number;
  headers: HeaderMap;
  /** The raw undici stream: consume it, or call `destroy()`/`dump()`, or the pooled socket stays busy. */
  body: UpstreamBody;
}

const DEFAULT_MAX_CONNECTIONS = 1024;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000;
const RESOLVED_PATHS_HELD = 256;

const CALLER_HEADERS_IGNORED = new Set([
  'host',
  'authorization',
  'x-api-key',
  'anthropic-version',
  'content-length',
  'content-type',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  // We relay and parse bytes as-is, so the upstream must not compress them.
  'accept-encoding',
]);

/** Pooled keep-alive HTTP client bound to exactly one upstream origin and base path. */
export class UpstreamClient {
  readonly provider: UpstreamProvider;
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly defaultApiKey: string | undefined;
  private readonly observer: UpstreamObserver | undefined;
  /** Paths found safe, with the base path before them. */
  private readonly resolvedPaths = new Map<string, string>();

  constructor(options: UpstreamClientOptions) {
    const base = parseBaseUrl(options.baseUrl);
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.provider = options.provider ?? 'openai';
    this.defaultApiKey = options.apiKey || undefined;
    this.observer = options.observer;
    this.pool = new Pool(base.origin, {
      connections: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.streamIdleTimeoutMs,
      connectTimeout: options.timeoutMs,
    });
  }

  /**
   * Sends one request. Resolves as soon as response headers arrive, whatever the status.
   * Rejects with UpstreamTimeoutError / UpstreamUnavailableError before headers, with UpstreamPathError for an
   * unsafe path, and with the abort reason when `signal` fires.
   */
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const path = this.resolvePath(request.path);
    const started = performance.now();
    try {
      const response = await this.pool.request({
        method: request.method,
        path,
        headers: this.buildHeaders(request),
        body: request.body ?? null,
        signal: request.signal ?? null,
      });
      this.observe(started, response.statusCode, null);
      return { status: response.statusCode, headers: definedHeaders(response.headers), body: response.body };
    } catch (error) {
      if (request.signal?.aborted) {
        this.observe(started, null, 'aborted');
        throw error;
      }
      const failure = classifyUpstreamFailure(error);
      if (failure)
        this.observe(started, null, failure instanceof UpstreamTimeoutError ? 'timeout' : 'unavailable');
      throw failure ?? error;
    }
  }

  private observe(started: number, status: number | null, failure: UpstreamObservation['failure']): void {
    this.observer?.({ status, failure, seconds: (performance.now() - started) / 1000 });
  }

  /** Waits for in-flight requests, then closes pooled sockets. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Closes pooled sockets immediately, failing in-flight requests. */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }

  private resolvePath(path: string): string {
    let resolved = this.resolvedPaths.get(path);
    if (resolved === undefined) {
      if (!isSafeRelativePath(path)) throw new UpstreamPathError(path);
      resolved = this.basePath + path;
      // the proxy calls a handful of paths; a client-chosen path cannot grow this past its bound
      if (this.resolvedPaths.size >= RESOLVED_PATHS_HELD) this.resolvedPaths.clear();
      this.resolvedPaths.set(path, resolved);
    }
    return resolved;
  }

  private buildHeaders(request: UpstreamRequest): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      const lower = name.toLowerCase();
      if (!CALLER_HEADERS_IGNORED.has(lower)) headers[lower] = value;
    }
    headers['accept-encoding'] = 'identity';
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const apiKey = request.apiKey || this.defaultApiKey;
    if (this.provider === 'anthropic') {
      headers['anthropic-version'] = ANTHROPIC_API_VERSION;
      if (apiKey) headers['x-api-key'] = apiKey;
    } else if (apiKey) {
      headers.authorization = `Bearer ${apiKey}`;
    }
    return headers;
  }
}

function parseBaseUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`upstream base URL must be http(s): ${baseUrl}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new Error('upstream base URL must not carry credentials, a query or a fragment');
  }
  return url;
}

function isSafeRelativePath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  if (hasControlOrSpace(path)) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return false;
  }
  return ![path, decoded].some((form) => form.includes('..') || form.includes('//') || form.includes('\\'));
}

// Undici would reject these too, but with a less useful error.
function hasControlOrSpace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** The headers without undefined values: undici's own object when it has none (it never has, so far). */
function definedHeaders(headers: Record<string, string | string[] | undefined>): HeaderMap {
  for (const name in headers) {
    if (headers[name] === undefined) {
      const result: HeaderMap = {};
      for (const [key, value] of Object.entries(headers)) if (value !== undefined) result[key] = value;
      return result;
    }
  }
  return headers as HeaderMap;
}
