import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import type { JsonObject } from '../../common/json-values';
import { RequestTranslationError } from '../../upstream/protocol-translation';
import { relayHeaders, type HeaderMap } from '../../upstream/relay-headers';
import { ClientAnswer, StreamTranslation, UpstreamExchange } from './upstream-exchange';
import { parseJson } from './verbatim-exchange';

const JSON_HEADERS = { 'content-type': 'application/json' };

export interface TranslatedExchangeSpec {
  path: string;
  /** The upstream body for the client's; a RequestTranslationError for input it cannot express. */
  translateRequest(clientBody: JsonObject): object;
  /** The client's error body for the upstream's error answer (parsed, undefined when not JSON). */
  errorBody(upstreamError: unknown, status: number): unknown;
  /**
   * The client's body and the reply for a successful upstream answer; `invalidUpstreamAnswer` when the
   * answer is not of the expected kind.
   */
  translateAnswer(upstreamAnswer: unknown, clientBody: JsonObject): { body: unknown; reply: string | null };
  stream(clientBody: JsonObject): StreamTranslation;
}

/**
 * The upstream speaks another protocol: the request is translated up, the answer, an error answer or
 * each stream event translated back, and the reply read from the translation.
 */
export function translatedExchange(spec: TranslatedExchangeSpec): UpstreamExchange {
  return {
    path: spec.path,
    requestBody(clientBody: JsonObject): JsonObject {
      try {
        return spec.translateRequest(clientBody) as JsonObject;
      } catch (error) {
        if (error instanceof RequestTranslationError) {
          throw new ApiError(HttpStatus.BAD_REQUEST, 'unsupported_for_provider', error.message, error.param);
        }
        throw error;
      }
    },
    streams: (status: number, _headers: HeaderMap, clientBody: JsonObject) =>
      status < 300 && clientBody.stream === true,
    answer(status: number, headers: HeaderMap, payload: Buffer, clientBody: JsonObject): ClientAnswer {
      const parsed = parseJson(payload);
      const clientHeaders = { ...relayHeaders(headers), ...JSON_HEADERS };
      if (status >= 300) {
        return {
          status,
          headers: clientHeaders,
          body: JSON.stringify(spec.errorBody(parsed, status)),
          reply: null,
        };
      }
      const { body, reply } = spec.translateAnswer(parsed, clientBody);
      return { status, headers: clientHeaders, body: JSON.stringify(body), reply };
    },
    streamHeaders: (headers: HeaderMap) => relayHeaders(headers),
    stream: (clientBody: JsonObject) => spec.stream(clientBody),
  };
}

/** A 2xx answer the service cannot use: 502, never a crash or a half-translated body. */
export function invalidUpstreamAnswer(expected: string): ApiError {
  return new ApiError(
    HttpStatus.BAD_GATEWAY,
    'upstream_invalid_response',
    `The upstream provider answered with something that is not ${expected}.`,
  );
}
