import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import {
  AnthropicStreamTranslator,
  toAnthropicRequest,
  toOpenAIChatCompletion,
  toOpenAIErrorBody,
} from '../../upstream/anthropic-translation';
import type { AnthropicMessage } from '../../upstream/anthropic-types';
import { RequestTranslationError } from '../../upstream/protocol-translation';
import type { OpenAIChatRequest } from '../../upstream/openai-types';
import { relayHeaders, type HeaderMap } from '../../upstream/relay-headers';
import { ChatCompletionStreamAccumulator, formatSseData } from '../../upstream/sse';
import { ClientAnswer, StreamTranslation, UpstreamExchange } from './upstream-exchange';
import { parseJson, verbatimExchange } from './verbatim-exchange';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Chat completions to an OpenAI-compatible upstream: verbatim. */
export const openAiChatExchange: UpstreamExchange = verbatimExchange({
  path: '/chat/completions',
  replyOf: completionText,
  streamReader() {
    const accumulator = new ChatCompletionStreamAccumulator();
    return {
      push: (chunk) => accumulator.push(chunk),
      end: () => accumulator.end(),
      completedReply() {
        const summary = accumulator.summary();
        const finished = summary.sawDone || summary.finishReasonByChoice.size > 0;
        return finished && summary.error === undefined ? accumulator.text(0) : null;
      },
      fail: chatStreamFailure,
    };
  },
});

/** Chat completions to Anthropic's Messages API: the request, the answer and each event translated. */
export const anthropicChatExchange: UpstreamExchange = {
  path: '/messages',
  requestBody: (clientBody: JsonObject) =>
    translateRequest(() => toAnthropicRequest(clientBody as unknown as OpenAIChatRequest)),
  streams: (status: number, _headers: HeaderMap, clientBody: JsonObject) =>
    status < 300 && clientBody.stream === true,
  answer(status: number, headers: HeaderMap, payload: Buffer): ClientAnswer {
    const parsed = parseJson(payload);
    const clientHeaders = { ...relayHeaders(headers), ...JSON_HEADERS };
    if (status >= 300) {
      return {
        status,
        headers: clientHeaders,
        body: JSON.stringify(toOpenAIErrorBody(parsed, status)),
        reply: null,
      };
    }
    if (!isAnthropicMessage(parsed)) throw invalidUpstreamAnswer('a Messages API message');
    const completion = toOpenAIChatCompletion(parsed);
    const content = completion.choices[0]?.message.content;
    return {
      status,
      headers: clientHeaders,
      body: JSON.stringify(completion),
      reply: typeof content === 'string' ? content : '',
    };
  },
  streamHeaders: (headers: HeaderMap) => relayHeaders(headers),
  stream(clientBody: JsonObject): StreamTranslation {
    const streamOptions = isPlainObject(clientBody.stream_options) ? clientBody.stream_options : {};
    const translator = new AnthropicStreamTranslator({
      model: String(clientBody.model),
      includeUsage: streamOptions.include_usage === true,
    });
    return {
      push: (chunk) => translator.push(chunk),
      end: () => translator.end(),
      completedReply: () => (translator.completed ? translator.text : null),
      fail: chatStreamFailure,
    };
  },
};

/** A chat stream broken off: one event carrying the error envelope. */
function chatStreamFailure(error: ApiError): string {
  return formatSseData(JSON.stringify(error.toEnvelope()));
}

/** The first choice's text of a `chat.completion` body, '' when it has none (e.g. only tool calls). */
export function completionText(answer: unknown): string | null {
  if (!isPlainObject(answer) || !Array.isArray(answer.choices)) return '';
  const first: unknown = answer.choices[0];
  if (!isPlainObject(first) || !isPlainObject(first.message)) return '';
  return typeof first.message.content === 'string' ? first.message.content : '';
}

export function isAnthropicMessage(value: unknown): value is AnthropicMessage {
  return (
    isPlainObject(value) &&
    typeof value.id === 'string' &&
    Array.isArray(value.content) &&
    value.content.every((block) => isPlainObject(block) && typeof block.type === 'string')
  );
}

/** Runs a request translation; input it cannot express is the client's 400, naming the field. */
export function translateRequest(translate: () => object): JsonObject {
  try {
    return translate() as JsonObject;
  } catch (error) {
    if (error instanceof RequestTranslationError) {
      throw new ApiError(HttpStatus.BAD_REQUEST, 'unsupported_for_provider', error.message, error.param);
    }
    throw error;
  }
}

/** A 2xx answer the service cannot use: 502, never a crash or a half-translated body. */
export function invalidUpstreamAnswer(expected: string): ApiError {
  return new ApiError(
    HttpStatus.BAD_GATEWAY,
    'upstream_invalid_response',
    `The upstream provider answered with something that is not ${expected}.`,
  );
}
