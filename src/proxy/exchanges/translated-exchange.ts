import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import type { JsonObject } from '../../common/json-values';
import { RequestTranslationError } from '../../upstream/protocol-translation';
import { relayHeaders, type HeaderMap } from '../../upstream/relay-headers';
import {
  ClientAnswer,
  invalidUpstreamAnswer,
  StreamTranslation,
  UpstreamExchange,
} from './upstream-exchange';
import { parseJson } from './verbatim-exchange';

const JSON_HEADERS = { 'content-type': 'application/json' };

export interface TranslatedExchangeSpec<Answer> {
  path: string;
  /** The upstream body for the client's; a RequestTranslationError for input it cannot express. */
  translateRequest(clientBody: JsonObject): object;
  /** The client's error body for the upstream's error answer (parsed, undefined when not JSON). */
  errorBody(upstreamError: unknown, status: number): unknown;
  /** What a successful upstream answer must be (a chat completion, a Messages API message). */
  expected: string;
  isAnswer(upstreamAnswer: unknown): upstreamAnswer is Answer;
  /** The client's body and the reply for a successful upstream answer (one that `isAnswer`). */
  translateAnswer(upstreamAnswer: Answer, clientBody: JsonObject): { body: unknown; reply: string | null };
  stream(clientBody: JsonObject): StreamTranslation;
}

/**
 * The upstream speaks another protocol: the request is translated up, the answer, an error answer or
 * each stream event translated back, and the reply read from the translation.
 */
export function translatedExchange<Answer>(spec: TranslatedExchangeSpec<Answer>): UpstreamExchange {
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
      if (!spec.isAnswer(parsed)) throw invalidUpstreamAnswer(spec.expected);
      const { body, reply } = spec.translateAnswer(parsed, clientBody);
      return { status, headers: clientHeaders, body: JSON.stringify(body), reply };
    },
    streamHeaders: (headers: HeaderMap) => relayHeaders(headers),
    stream: (clientBody: JsonObject) => spec.stream(clientBody),
  };
}
