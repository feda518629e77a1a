// OpenAI <-> Anthropic translation, split by direction; import from here.
export {
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  InvalidChatRequestError,
  toAnthropicRequest,
  type AnthropicRequestOptions,
} from './anthropic-request-translation';
export {
  toOpenAIChatCompletion,
  toOpenAIErrorBody,
  toOpenAIFinishReason,
  toOpenAIModelList,
  toOpenAIUsage,
  type ChatCompletionTranslationOptions,
} from './anthropic-response-translation';
export {
  AnthropicStreamTranslator,
  type AnthropicStreamTranslatorOptions,
} from './anthropic-stream-translator';
