import { HttpStatus } from '@nestjs/common';
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from './api-error';

export interface HttpServerLimits {
  /** A request whose headers have not all arrived this long after it began is answered 408. */
  headersTimeoutMs: number;
  /** A request not received whole (headers and body) this long after it began is answered 408. */
  requestTimeoutMs: number;
}

/** Not among Nest's HttpStatus values. */
const REQUEST_HEADER_FIELDS_TOO_LARGE = 431 as HttpStatus;

/** How often Node looks for requests past their time limits (its own default is 30 s). */
const LIMITS_CHECK_MS = 1_000;

/**
 * Time limits on receiving a request, and the error envelope on the errors Node's HTTP server answers
 * itself, before any middleware runs: headers that never end or a body shorter than its
 * Content-Length (408 `request_timeout`), headers over Node's size limit (431
 * `request_header_fields_too_large`), a request that is not HTTP (400 `malformed_request`). Node
 * would answer these with an empty body after 60 s and 300 s. Set before the server listens.
 */
export function applyHttpServerLimits(server: Server, limits: HttpServerLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // the server option, read when the server starts listening (not in @types/node as a property)
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    LIMITS_CHECK_MS,
    limits.headersTimeoutMs,
  );
  server.on('clientError', answerClientError);
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // the request being received, when Node had already handed it over (a body still to come)
  const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
  const refusal = refusalFor(error.code);
  if (refusal === null || !socket.writable || response?.headersSent === true) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(refusal.toEnvelope());
  if (response !== null) {
    // through the response, so that its log line and metrics say what the client was told
    response.shouldKeepAlive = false;
    response.statusCode = refusal.status;
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.setHeader('connection', 'close');
    response.end(body, () => socket.destroy());
    return;
  }
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** The client's error for what Node's HTTP server met; null when the connection is gone anyway. */
function refusalFor(code: string | undefined): ApiError | null {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        HttpStatus.REQUEST_TIMEOUT,
        'request_timeout',
        'The request was not received in time: its headers or its body stopped coming.',
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        REQUEST_HEADER_FIELDS_TOO_LARGE,
        'request_header_fields_too_large',
        'The request headers are too large.',
      );
    default:
      return new ApiError(HttpStatus.BAD_REQUEST, 'malformed_request', 'The request is not valid HTTP.');
  }
}
