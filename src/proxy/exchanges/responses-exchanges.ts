import type { ApiError } from '../../common/api-error';
import { isPlainObject } from '../../common/json-values';
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
import { isAnthropicMessage } from './chat-exchanges';
import { translatedExchange } from './translated-exchange';
import { UpstreamExchange } from './upstream-exchange';
import { verbatimExchange } from './verbatim-exchange';

/** Responses to an OpenAI-compatible upstream: verbatim, typed events and all. */
export const openAiResponsesExchange: UpstreamExchange = verbatimExchange({
  path: '/responses',
  expected: 'a Responses API response',
  isAnswer: (answer) => isPlainObject(answer) && Array.isArray(answer.output),
  replyOf: responseOutputText,
  streamReader() {
    const accumulator = new ResponsesStreamAccumulator();
    return {
      push: (chunk) => accumulator.push(chunk),
      end: () => accumulator.end(),
      completedReply: () => (accumulator.answered ? accumulator.text : null),
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
export const anthropicResponsesExchange: UpstreamExchange = translatedExchange({
  path: '/messages',
  translateRequest: (clientBody) => toAnthropicRequest(responsesToChatRequest(clientBody)),
  errorBody: toOpenAIErrorBody,
  expected: 'a Messages API message',
  isAnswer: isAnthropicMessage,
  translateAnswer(upstreamAnswer, clientBody) {
    const response = chatCompletionToResponse(toOpenAIChatCompletion(upstreamAnswer), clientBody);
    return { body: response, reply: responseOutputText(response) };
  },
  stream(clientBody) {
    const toChat = new AnthropicStreamTranslator({ model: String(clientBody.model), includeUsage: true });
    const toResponses = new ChatToResponsesStreamTranslator({ request: clientBody });
    return {
      push: (chunk) => toResponses.push(toChat.push(chunk)),
      end: () => toResponses.push(toChat.end()) + toResponses.end(),
      completedReply: () => (toResponses.answered ? toResponses.text : null),
      fail: (error: ApiError) => toResponses.fail(error.message, error.code),
    };
  },
});
