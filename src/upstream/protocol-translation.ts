// Translations between the inbound protocols (Anthropic Messages, OpenAI Responses) and chat completions, the
// pivot; plus side readers for the streams relayed verbatim. Import from here.
export { RequestTranslationError } from './request-translation-error';
export { anthropicToChatRequest } from './anthropic-to-chat-request';
export { anthropicErrorType } from '../common/api-error';
export {
  chatCompletionToAnthropicMessage,
  errorMessage,
  formatAnthropicErrorEvent,
  toAnthropicErrorBody,
  toAnthropicStopReason,
  toAnthropicUsage,
} from './chat-to-anthropic-response';
export {
  ChatToAnthropicStreamTranslator,
  type ChatToAnthropicStreamOptions,
} from './chat-to-anthropic-stream';
export { responsesToChatRequest } from './responses-to-chat-request';
export {
  chatCompletionToResponse,
  formatResponsesErrorEvent,
  newResponsesId,
  responseObject,
  toResponsesUsage,
  type ChatCompletionToResponseOptions,
  type ResponsesStreamError,
} from './chat-to-responses-response';
export {
  ChatToResponsesStreamTranslator,
  type ChatToResponsesStreamOptions,
} from './chat-to-responses-stream';
export {
  responseOutputText,
  ResponsesStreamAccumulator,
  type ResponsesStreamOutcome,
} from './responses-stream-accumulator';
export { anthropicMessageText, AnthropicStreamAccumulator } from './anthropic-stream-accumulator';
export {
  anthropicPreviousUserText,
  anthropicQuestion,
  anthropicTurnUserTexts,
  responsesPreviousUserText,
  responsesQuestion,
  responsesTurnUserTexts,
} from './inbound-turns';
