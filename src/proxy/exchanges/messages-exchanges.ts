import type { ApiError } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import {
  anthropicMessageText,
  AnthropicStreamAccumulator,
  anthropicToChatRequest,
  chatCompletionToAnthropicMessage,
  ChatToAnthropicStreamTranslator,
  formatAnthropicErrorEvent,
  toAnthropicErrorBody,
} from '../../upstream/protocol-translation';
import { anthropicErrorType } from '../../common/api-error';
import { relayHeaders, type HeaderMap } from '../../upstream/relay-headers';
import { invalidUpstreamAnswer, translateRequest } from './chat-exchanges';
import { ClientAnswer, StreamTranslation, UpstreamExchange } from './upstream-exchange';
import { parseJson, verbatimExchange } from './verbatim-exchange';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** An Anthropic stream broken off: its own `error` event. */
function anthropicStreamFailure(error: ApiError): string {
  return formatAnthropicErrorEvent(anthropicErrorType(error.status), error.message);
}

/** Messages to Anthropic: verbatim, with the client's beta features. */
export const anthropicMessagesExchange: UpstreamExchange = verbatimExchange({
  path: '/messages',
  forwardedHeaders: ['anthropic-beta'],
  replyOf: anthropicMessageText,
  streamReader() {
    const accumulator = new AnthropicStreamAccumulator();
    return {
      push: (chunk) => accumulator.push(chunk),
      end: () => accumulator.end(),
      completedReply: () => (accumulator.completed ? accumulator.text : null),
      fail: anthropicStreamFailure,
    };
  },
});

/** Messages to an OpenAI-compatible upstream: translated to chat completions and back. */
export const openAiMessagesExchange: UpstreamExchange = {
  path: '/chat/completions',
  requestBody: (clientBody: JsonObject) => translateRequest(() => anthropicToChatRequest(clientBody)),
  streams: (status: number, _headers: HeaderMap, clientBody: JsonObject) =>
    status < 300 && clientBody.stream === true,
  answer(status: number, headers: HeaderMap, payload: Buffer): ClientAnswer {
    const parsed = parseJson(payload);
    const clientHeaders = { ...relayHeaders(headers), ...JSON_HEADERS };
    if (status >= 300) {
      return {
        status,
        headers: clientHeaders,
        body: JSON.stringify(toAnthropicErrorBody(parsed, status)),
        reply: null,
      };
    }
    if (!isPlainObject(parsed) || !Array.isArray(parsed.choices))
      throw invalidUpstreamAnswer('a chat completion');
    const message = chatCompletionToAnthropicMessage(parsed);
    return {
      status,
      headers: clientHeaders,
      body: JSON.stringify(message),
      reply: anthropicMessageText(message),
    };
  },
  streamHeaders: (headers: HeaderMap) => relayHeaders(headers),
  stream(clientBody: JsonObject): StreamTranslation {
    const translator = new ChatToAnthropicStreamTranslator({ model: String(clientBody.model) });
    return {
      push: (chunk) => translator.push(chunk),
      end: () => translator.end(),
      completedReply: () => (translator.completed ? translator.text : null),
      fail: (error: ApiError) => translator.fail(error.message, anthropicErrorType(error.status)),
    };
  },
};
