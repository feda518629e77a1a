import type { AnthropicMessage, AnthropicModelList, AnthropicUsage } from './anthropic-types';
import { isPlainObject } from '../common/json-values';
import type {
  OpenAIChatCompletion,
  OpenAIErrorBody,
  OpenAIFinishReason,
  OpenAIModelList,
  OpenAIToolCall,
  OpenAIUsage,
} from './openai-types';

const FINISH_REASONS: Record<string, OpenAIFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function toOpenAIFinishReason(stopReason: string | null | undefined): OpenAIFinishReason {
  return (stopReason && FINISH_REASONS[stopReason]) || 'stop';
}

/** OpenAI's prompt_tokens include cached input, Anthropic reports cache reads and writes separately. */
export function toOpenAIUsage(usage: Partial<AnthropicUsage> | undefined): OpenAIUsage {
  const cacheRead = usage?.cache_read_input_tokens ?? 0;
  const cacheWrite = usage?.cache_creation_input_tokens ?? 0;
  const promptTokens = (usage?.input_tokens ?? 0) + cacheRead + cacheWrite;
  const completionTokens = usage?.output_tokens ?? 0;
  const result: OpenAIUsage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (cacheRead > 0) result.prompt_tokens_details = { cached_tokens: cacheRead };
  return result;
}

export interface ChatCompletionTranslationOptions {
  /** Unix seconds; defaults to now. */
  created?: number;
}

/** Translates a non-streaming Anthropic Messages response into an OpenAI `chat.completion`. */
export function toOpenAIChatCompletion(
  message: AnthropicMessage,
  options: ChatCompletionTranslationOptions = {},
): OpenAIChatCompletion {
  const texts: string[] = [];
  const toolCalls: OpenAIToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && 'text' in block) {
      texts.push(block.text);
    } else if (block.type === 'tool_use' && 'input' in block) {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const completionMessage: OpenAIChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: null,
  };
  if (toolCalls.length > 0) completionMessage.tool_calls = toolCalls;
  return {
    id: message.id,
    object: 'chat.completion',
    created: options.created ?? nowSeconds(),
    model: message.model,
    choices: [
      {
        index: 0,
        message: completionMessage,
        logprobs: null,
        finish_reason: toOpenAIFinishReason(message.stop_reason),
      },
    ],
    usage: toOpenAIUsage(message.usage),
  };
}

export function toOpenAIModelList(list: AnthropicModelList): OpenAIModelList {
  return {
    object: 'list',
    data: list.data.map((model) => ({
      id: model.id,
      object: 'model',
      created: Math.floor((Date.parse(model.created_at) || 0) / 1000),
      owned_by: 'anthropic',
    })),
  };
}

/** Rewrites an Anthropic error body (`{type:'error', error:{type, message}}`) into OpenAI's error envelope. */
export function toOpenAIErrorBody(anthropicBody: unknown, status: number): OpenAIErrorBody {
  const error =
    isPlainObject(anthropicBody) && isPlainObject(anthropicBody.error) ? anthropicBody.error : undefined;
  return {
    error: {
      message: typeof error?.message === 'string' ? error.message : `upstream returned status ${status}`,
      type: typeof error?.type === 'string' ? error.type : 'upstream_error',
      param: null,
      code: null,
    },
  };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
