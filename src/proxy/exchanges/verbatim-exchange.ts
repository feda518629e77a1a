import type { ApiError } from '../../common/api-error';
import type { JsonObject } from '../../common/json-values';
import { relayHeaders, type HeaderMap } from '../../upstream/relay-headers';
import {
  ClientAnswer,
  invalidUpstreamAnswer,
  StreamTranslation,
  UpstreamExchange,
} from './upstream-exchange';

/** Reads a stream the relay forwards untouched, to learn the reply and whether it completed. */
export interface StreamReader {
  push(chunk: Buffer): void;
  end(): void;
  completedReply(): string | null;
  /** The event that ends the stream when the upstream broke it off. */
  fail(error: ApiError): string;
}

export interface VerbatimExchangeSpec {
  path: string;
  forwardedHeaders?: readonly string[];
  /** What a successful answer must be (a chat completion, a response, a message). */
  expected: string;
  /** Whether a successful answer (parsed JSON, undefined when it is not JSON) is one of this protocol. */
  isAnswer(answer: unknown): boolean;
  /** The reply of a whole successful answer (one that `isAnswer`); null when it is no answer to learn from. */
  replyOf(answer: unknown): string | null;
  streamReader(): StreamReader;
}

/**
 * The upstream speaks the client's protocol: the body goes up as it is (context injected), and the
 * answer comes back byte for byte (status, the headers that matter, the body or each stream chunk as it
 * arrives), read on the side for the reply. A 2xx whole answer that is not one of the protocol is 502
 * `upstream_invalid_response`, not relayed.
 */
export function verbatimExchange(spec: VerbatimExchangeSpec): UpstreamExchange {
  return {
    path: spec.path,
    forwardedHeaders: spec.forwardedHeaders,
    requestBody: (clientBody: JsonObject) => clientBody,
    streams: (status: number, headers: HeaderMap) => status < 300 && isEventStream(headers),
    answer(status: number, headers: HeaderMap, payload: Buffer): ClientAnswer {
      if (status >= 300) return { status, headers: relayHeaders(headers), body: payload, reply: null };
      const parsed = parseJson(payload);
      if (!spec.isAnswer(parsed)) throw invalidUpstreamAnswer(spec.expected);
      return { status, headers: relayHeaders(headers), body: payload, reply: spec.replyOf(parsed) };
    },
    streamHeaders: (headers: HeaderMap) => relayHeaders(headers),
    stream(): StreamTranslation {
      const reader = spec.streamReader();
      return {
        push(chunk: Buffer) {
          reader.push(chunk);
          return chunk;
        },
        end() {
          reader.end();
          return '';
        },
        completedReply: () => reader.completedReply(),
        fail: (error: ApiError) => reader.fail(error),
      };
    },
  };
}

export function isEventStream(headers: HeaderMap): boolean {
  const contentType = headers['content-type'];
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/event-stream');
}

export function parseJson(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
}
