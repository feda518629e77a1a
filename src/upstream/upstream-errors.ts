/** Base class for failures talking to the upstream provider; `cause` holds the underlying undici/net error. */
export abstract class UpstreamError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = new.target.name;
  }
}

/** No response headers within `timeoutMs`, connect timeout, or no body bytes within `streamIdleTimeoutMs`. */
export class UpstreamTimeoutError extends UpstreamError {}

/** Connection refused, DNS failure, reset or closed socket: the upstream could not answer. */
export class UpstreamUnavailableError extends UpstreamError {}

/** The caller asked for a path that could escape the configured base URL. */
export class UpstreamPathError extends Error {
  constructor(readonly path: string) {
    super(`refusing to call upstream path ${JSON.stringify(path)}`);
    this.name = 'UpstreamPathError';
  }
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

// Errors that are the caller's doing (abort) or a programming error, never the upstream's fault.
const NOT_UPSTREAM_CODES = new Set(['UND_ERR_ABORTED', 'UND_ERR_INVALID_ARG', 'ABORT_ERR']);

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

// Duck-typed: the DOMException from AbortController may come from another realm (e.g. under Jest).
function isAbortError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  return (error as { name?: unknown }).name === 'AbortError' || errorCode(error) === 'UND_ERR_ABORTED';
}

/**
 * Maps an error from undici (while waiting for headers or while reading the body) to an UpstreamError.
 * Returns undefined for aborts and programming errors, which callers should rethrow unchanged.
 */
export function classifyUpstreamFailure(error: unknown): UpstreamError | undefined {
  if (error instanceof UpstreamError) return error;
  if (isAbortError(error)) return undefined;
  const code = errorCode(error);
  if (code !== undefined && NOT_UPSTREAM_CODES.has(code)) return undefined;
  const detail = String((error as { message?: unknown } | null)?.message ?? error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new UpstreamTimeoutError(`upstream timed out (${code})`, error);
  }
  return new UpstreamUnavailableError(`upstream unavailable (${code ?? detail})`, error);
}
