import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import type { JsonObject } from '../../common/json-values';
import type { HeaderMap } from '../../upstream/relay-headers';

/** An upstream answer as the client receives it, and what the pipeline learns from it. */
export interface ClientAnswer {
  status: number;
  headers: HeaderMap;
  body: string | Buffer;
  /** The assistant's text when the upstream answered (a limit included); null for an error answer. */
  reply: string | null;
}

/** Turns the upstream's event stream into the client's, piece by piece, reading the reply on the side. */
export interface StreamTranslation {
  /** What to write to the client for one upstream chunk (the bytes themselves, or their translation). */
  push(chunk: Buffer): string | Buffer;
  /** What to write once the upstream stream has ended. */
  end(): string;
  /**
   * The assistant's text when the upstream ended the answer (the token limit included); null when it was cut,
   * failed, or carried no valid event.
   */
  completedReply(): string | null;
  /** The last event of a stream the upstream broke off, in the client's protocol. */
  fail(error: ApiError): string;
}

/**
 * One inbound protocol against the configured upstream: verbatim when the upstream speaks the
 * client's protocol, translated otherwise. Chosen once at boot for each protocol.
 */
export interface UpstreamExchange {
  /** The upstream path, below the configured base URL. */
  readonly path: string;
  /** The body to send upstream. Throws an ApiError (400) for input this upstream cannot take. */
  requestBody(clientBody: JsonObject): JsonObject;
  /** Request headers of the client's that this upstream should see (e.g. `anthropic-beta`). */
  readonly forwardedHeaders?: readonly string[];
  /**
   * Whether this answer is relayed as a stream. Here and below, `clientBody` is the client's request as it
   * sent it (before the context was injected): a translation echoes its settings, such as a Responses
   * request's `instructions`, and must never echo the profile.
   */
  streams(status: number, headers: HeaderMap, clientBody: JsonObject): boolean;
  /** A whole (non-stream) answer, error answers included. Throws ApiError 502 for an unusable answer. */
  answer(status: number, headers: HeaderMap, payload: Buffer, clientBody: JsonObject): ClientAnswer;
  /** Headers of a streamed answer. */
  streamHeaders(headers: HeaderMap): HeaderMap;
  stream(clientBody: JsonObject): StreamTranslation;
}

/** A 2xx answer the service cannot use: 502, never a crash, a half-translated body, or a stored turn. */
export function invalidUpstreamAnswer(expected: string): ApiError {
  return new ApiError(
    HttpStatus.BAD_GATEWAY,
    'upstream_invalid_response',
    `The upstream provider answered with something that is not ${expected}.`,
  );
}
