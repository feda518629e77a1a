import type { ApiError } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import {
  AnthropicStreamTranslator,
  toAnthropicRequest,
  toOpenAIChatCompletion,
  toOpenAIErrorBody,
} from '../../upstream/anthropic-translation';
import type { AnthropicMessage } from '../../upstream/anthropic-types';
import type { OpenAIChatRequest } from '../../upstream/openai-types';
import { ChatCompletionStreamAccumulator, formatSseData } from '../../upstream/sse';
import { translatedExchange } from './translated-exchange';
import { UpstreamExchange } from './upstream-exchange';
import { verbatimExchange } from './verbatim-exchange';

/** Chat completions to an OpenAI-compatible upstream: verbatim. */
export const openAiChatExchange: UpstreamExchange = verbatimExchange({
  path: '/chat/completions',
  expected: 'a chat completion',
  isAnswer: isChatCompletion,
  replyOf: completionText,
  streamReader() {
    const accumulator = new ChatCompletionStreamAccumulator();
    return {
      push: (chunk) => accumulator.push(chunk),
      end: () => accumulator.end(),
      completedReply: () => accumulator.completedText(),
      fail: chatStreamFailure,
    };
  },
});

/** Chat completions to Anthropic's Messages API: the request, the answer and each event translated. */
export const anthropicChatExchange: UpstreamExchange = translatedExchange({
  path: '/messages',
  translateRequest: (clientBody) => toAnthropicRequest(clientBody as unknown as OpenAIChatRequest),
  errorBody: toOpenAIErrorBody,
  expected: 'a Messages API message',
  isAnswer: isAnthropicMessage,
  translateAnswer(upstreamAnswer) {
    const completion = toOpenAIChatCompletion(upstreamAnswer);
    const content = completion.choices[0]?.message.content;
    return { body: completion, reply: typeof content === 'string' ? content : '' };
  },
  stream(clientBody) {
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
});

/** A chat stream broken off: one event carrying the error envelope. */
function chatStreamFailure(error: ApiError): string {
  return formatSseData(JSON.stringify(error.toEnvelope()));
}

/** A `chat.completion` body: an object whose `choices` is an array of objects. */
export function isChatCompletion(answer: unknown): answer is JsonObject & { choices: JsonObject[] } {
  return (
    isPlainObject(answer) && Array.isArray(answer.choices) && answer.choices.every((c) => isPlainObject(c))
  );
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
