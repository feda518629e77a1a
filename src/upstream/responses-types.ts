import type { JsonObject } from '../common/json-values';

// The subset of the OpenAI Responses API wire format (`POST /v1/responses`) that the proxy reads or produces.
// Field names and shapes follow the official SDK's `openai/resources/responses` types.

export interface ResponsesInputText {
  type: 'input_text';
  text: string;
}

export interface ResponsesInputImage {
  type: 'input_image';
  image_url?: string | null;
  file_id?: string | null;
  detail?: 'low' | 'high' | 'auto' | 'original';
}

export interface ResponsesInputFile {
  type: 'input_file';
  file_id?: string | null;
  file_data?: string;
  file_url?: string;
  filename?: string;
}

export type ResponsesInputContent = ResponsesInputText | ResponsesInputImage | ResponsesInputFile;

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  annotations: JsonObject[];
  logprobs?: JsonObject[];
}

export interface ResponsesOutputRefusal {
  type: 'refusal';
  refusal: string;
}

export type ResponsesOutputContent = ResponsesOutputText | ResponsesOutputRefusal;

/** An input message: `type` may be left out (the "easy" form); assistant content may be output parts. */
export interface ResponsesInputMessage {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<ResponsesInputContent | ResponsesOutputContent>;
  id?: string;
  status?: ResponsesItemStatus;
}

export type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponsesOutputMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ResponsesItemStatus;
  content: ResponsesOutputContent[];
}

export interface ResponsesFunctionCall {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: ResponsesItemStatus;
}

export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string | ResponsesInputContent[];
  id?: string | null;
  status?: ResponsesItemStatus | null;
}

export type ResponsesInputItem =
  ResponsesInputMessage | ResponsesFunctionCall | ResponsesFunctionCallOutput | { type: string };

export type ResponsesOutputItem = ResponsesOutputMessage | ResponsesFunctionCall;

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters: JsonObject | null;
  strict: boolean | null;
}

export type ResponsesToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: string; [field: string]: unknown };

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: JsonObject;
      description?: string;
      strict?: boolean | null;
    };

export interface ResponsesTextConfig {
  format?: ResponsesTextFormat;
  verbosity?: 'low' | 'medium' | 'high' | null;
}

export interface ResponsesRequest {
  model: string;
  input?: string | ResponsesInputItem[];
  instructions?: string | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stream?: boolean | null;
  tools?: Array<ResponsesFunctionTool | { type: string }>;
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean | null;
  text?: ResponsesTextConfig;
  previous_response_id?: string | null;
  store?: boolean | null;
  reasoning?: JsonObject | null;
  metadata?: Record<string, string> | null;
  truncation?: 'auto' | 'disabled' | null;
  user?: string;
  [field: string]: unknown;
}

export type ResponsesStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponsesError {
  code: string;
  message: string;
}

/** A `response` object: the non-stream answer, and the snapshot carried by the lifecycle stream events. */
export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponsesStatus;
  background: boolean;
  error: ResponsesError | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  text: ResponsesTextConfig;
  tool_choice: ResponsesToolChoice;
  tools: Array<ResponsesFunctionTool | { type: string }>;
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

/**
 * An `error` stream event. The official SDK types give it flat `code`, `message` and `param`; the Vercel AI SDK
 * reads a nested `error` object, and the `openai` client throws only for one. Both are written.
 */
export interface ResponsesErrorEventFields {
  code: string;
  message: string;
  param: null;
  error: { type: string; code: string; message: string; param: null };
}

/** Every stream event carries its type and a sequence number that starts at 0 and grows by one. */
interface ResponsesEventBase {
  sequence_number: number;
}

export type ResponsesStreamEvent = ResponsesEventBase &
  (
    | {
        type:
          | 'response.created'
          | 'response.in_progress'
          | 'response.completed'
          | 'response.incomplete'
          | 'response.failed';
        response: ResponsesResponse;
      }
    | {
        type: 'response.output_item.added' | 'response.output_item.done';
        output_index: number;
        item: ResponsesOutputItem;
      }
    | {
        type: 'response.content_part.added' | 'response.content_part.done';
        item_id: string;
        output_index: number;
        content_index: number;
        part: ResponsesOutputContent;
      }
    | {
        type: 'response.output_text.delta';
        item_id: string;
        output_index: number;
        content_index: number;
        delta: string;
        logprobs: JsonObject[];
      }
    | {
        type: 'response.output_text.done';
        item_id: string;
        output_index: number;
        content_index: number;
        text: string;
        logprobs: JsonObject[];
      }
    | {
        type: 'response.refusal.delta';
        item_id: string;
        output_index: number;
        content_index: number;
        delta: string;
      }
    | {
        type: 'response.refusal.done';
        item_id: string;
        output_index: number;
        content_index: number;
        refusal: string;
      }
    | { type: 'response.function_call_arguments.delta'; item_id: string; output_index: number; delta: string }
    | ({ type: 'error' } & ResponsesErrorEventFields)
    | {
        type: 'response.function_call_arguments.done';
        item_id: string;
        output_index: number;
        name: string;
        arguments: string;
      }
  );
