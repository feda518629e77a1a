import type { ApiError } from '../../common/api-error';
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
import { isAnthropicMessage, isChatCompletion } from './chat-exchanges';
import { translatedExchange } from './translated-exchange';
import { UpstreamExchange } from './upstream-exchange';
import { verbatimExchange } from './verbatim-exchange';

/** An Anthropic stream broken off: its own `error` event. */
function anthropicStreamFailure(error: ApiError): string {
  return formatAnthropicErrorEvent(anthropicErrorType(error.status), error.message);
}

/** Messages to Anthropic: verbatim, with the client's beta features. */
export const anthropicMessagesExchange: UpstreamExchange = verbatimExchange({
  path: '/messages',
  forwardedHeaders: ['anthropic-beta'],
  expected: 'a Messages API message',
  isAnswer: isAnthropicMessage,
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
export const openAiMessagesExchange: UpstreamExchange = translatedExchange({
  path: '/chat/completions',
  translateRequest: (clientBody) => anthropicToChatRequest(clientBody),
  errorBody: toAnthropicErrorBody,
  expected: 'a chat completion',
  isAnswer: isChatCompletion,
  translateAnswer(upstreamAnswer) {
    const message = chatCompletionToAnthropicMessage(upstreamAnswer);
    return { body: message, reply: anthropicMessageText(message) };
  },
  stream(clientBody) {
    const translator = new ChatToAnthropicStreamTranslator({ model: String(clientBody.model) });
    return {
      push: (chunk) => translator.push(chunk),
      end: () => translator.end(),
      completedReply: () => (translator.completed ? translator.text : null),
      fail: (error: ApiError) => translator.fail(error.message, anthropicErrorType(error.status)),
    };
  },
});
