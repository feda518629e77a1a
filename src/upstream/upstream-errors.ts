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

const CAUSES: Array<[RegExp, string]> = [
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NONAME)$/, 'its host name could not be resolved'],
  [/^ECONNREFUSED$/, 'the connection was refused'],
  [/^(ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED)$/, 'the connection was closed before an answer'],
  [/^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN)$/, 'the network cannot reach it'],
  [/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/, 'the TLS handshake failed'],
  [/^UND_ERR_CONNECT_TIMEOUT$/, 'connecting took longer than UPSTREAM_TIMEOUT_MS'],
  [/^(UND_ERR_HEADERS_TIMEOUT|ETIMEDOUT)$/, 'it did not answer within UPSTREAM_TIMEOUT_MS'],
  [/^UND_ERR_BODY_TIMEOUT$/, 'it sent nothing for UPSTREAM_STREAM_IDLE_TIMEOUT_MS'],
];

/** Why the upstream could not be used, in words an operator can act on, with the error's code. */
export function upstreamFailureCause(error: UpstreamError): string {
  let cause: unknown = error.cause;
  // undici nests the socket error (e.g. a TLS failure inside a connect error)
  for (let depth = 0; depth < 3 && cause; depth++) {
    const code = errorCode(cause);
    const known = code === undefined ? undefined : CAUSES.find(([pattern]) => pattern.test(code));
    if (known) return `${known[1]} (${code})`;
    cause = (cause as { cause?: unknown }).cause;
  }
  const code = errorCode(error.cause);
  const detail = error.cause instanceof Error ? error.cause.message.slice(0, 200) : '';
  return code ? `${detail || 'it failed'} (${code})` : detail || 'it failed';
}
