import type { JsonObject } from '../common/json-values';

// The subset of the OpenAI Chat Completions wire format that the proxy reads or produces.

export interface OpenAITextPart {
  type: 'text';
  text: string;
}

export interface OpenAIImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface OpenAIRefusalPart {
  type: 'refusal';
  refusal: string;
}

export type OpenAIContentPart = OpenAITextPart | OpenAIImagePart | OpenAIRefusalPart;

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface OpenAISystemMessage {
  role: 'system' | 'developer';
  content: string | OpenAITextPart[];
  name?: string;
}

export interface OpenAIUserMessage {
  role: 'user';
  content: string | OpenAIContentPart[];
  name?: string;
}

export interface OpenAIAssistantMessage {
  role: 'assistant';
  content?: string | OpenAIContentPart[] | null;
  tool_calls?: OpenAIToolCall[];
  refusal?: string | null;
  name?: string;
}

export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | OpenAITextPart[];
}

export type OpenAIChatMessage =
  OpenAISystemMessage | OpenAIUserMessage | OpenAIAssistantMessage | OpenAIToolMessage;

export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonObject; strict?: boolean | null };
}

export type OpenAIToolChoice =
  'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stop?: string | string[] | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  tools?: OpenAIFunctionTool[];
  tool_choice?: OpenAIToolChoice;
  parallel_tool_calls?: boolean;
  user?: string;
  response_format?: OpenAIResponseFormat;
}

export type OpenAIResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; schema?: JsonObject; description?: string; strict?: boolean | null };
    };

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface OpenAIChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      refusal: string | null;
      tool_calls?: OpenAIToolCall[];
    };
    logprobs: null;
    finish_reason: OpenAIFinishReason;
  }>;
  usage: OpenAIUsage;
}

export interface OpenAIToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface OpenAIChunkDelta {
  role?: 'assistant';
  content?: string;
  refusal?: string | null;
  tool_calls?: OpenAIToolCallDelta[];
}

export interface OpenAIChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: OpenAIChunkDelta;
    logprobs: null;
    finish_reason: OpenAIFinishReason | null;
  }>;
  usage?: OpenAIUsage | null;
}

export interface OpenAIModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface OpenAIModelList {
  object: 'list';
  data: OpenAIModel[];
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}
