import type { ApiError } from '../../common/api-error';
import type { JsonObject } from '../../common/json-values';
import {
  AnthropicStreamTranslator,
  toAnthropicRequest,
  toOpenAIChatCompletion,
  toOpenAIErrorBody,
} from '../../upstream/anthropic-translation';
import {
  chatCompletionToResponse,
  ChatToResponsesStreamTranslator,
  formatResponsesErrorEvent,
  responseOutputText,
  responsesToChatRequest,
  ResponsesStreamAccumulator,
} from '../../upstream/protocol-translation';
import { relayHeaders, type HeaderMap } from '../../upstream/relay-headers';
import { invalidUpstreamAnswer, isAnthropicMessage, translateRequest } from './chat-exchanges';
import { ClientAnswer, StreamTranslation, UpstreamExchange } from './upstream-exchange';
import { parseJson, verbatimExchange } from './verbatim-exchange';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Responses to an OpenAI-compatible upstream: verbatim, typed events and all. */
export const openAiResponsesExchange: UpstreamExchange = verbatimExchange({
  path: '/responses',
  replyOf: responseOutputText,
  streamReader() {
    const accumulator = new ResponsesStreamAccumulator();
    return {
      push: (chunk) => accumulator.push(chunk),
      end: () => accumulator.end(),
      completedReply: () => (accumulator.completed ? accumulator.text : null),
      fail: (error: ApiError) =>
        formatResponsesErrorEvent((accumulator.lastSequenceNumber ?? -1) + 1, {
          message: error.message,
          code: error.code,
        }),
    };
  },
});

/**
 * Responses to Anthropic's Messages API, through chat completions: the request is translated to chat
 * and from there to Messages, the answer (or each event) back the same way.
 */
export const anthropicResponsesExchange: UpstreamExchange = {
  path: '/messages',
  requestBody: (clientBody: JsonObject) =>
    translateRequest(() => toAnthropicRequest(responsesToChatRequest(clientBody))),
  streams: (status: number, _headers: HeaderMap, clientBody: JsonObject) =>
    status < 300 && clientBody.stream === true,
  answer(status: number, headers: HeaderMap, payload: Buffer, clientBody: JsonObject): ClientAnswer {
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
    const response = chatCompletionToResponse(toOpenAIChatCompletion(parsed), clientBody);
    return {
      status,
      headers: clientHeaders,
      body: JSON.stringify(response),
      reply: responseOutputText(response),
    };
  },
  streamHeaders: (headers: HeaderMap) => relayHeaders(headers),
  stream(clientBody: JsonObject): StreamTranslation {
    const toChat = new AnthropicStreamTranslator({ model: String(clientBody.model), includeUsage: true });
    const toResponses = new ChatToResponsesStreamTranslator({ request: clientBody });
    return {
      push: (chunk) => toResponses.push(toChat.push(chunk)),
      end: () => toResponses.push(toChat.end()) + toResponses.end(),
      completedReply: () => (toResponses.completed ? toResponses.text : null),
      fail: (error: ApiError) => toResponses.fail(error.message, error.code),
    };
  },
};
