import type { JsonObject } from '../common/json-values';
import type {
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAIContentPart,
  OpenAIFunctionTool,
  OpenAIResponseFormat,
  OpenAIToolChoice,
} from './openai-types';
import {
  optionalBoolean,
  optionalNumber,
  optionalPositiveInteger,
  RequestTranslationError,
  requireArray,
  requireNonEmptyString,
  requireObject,
  requireString,
  unsupported,
} from './request-translation-error';

/**
 * Translates an OpenAI Responses request body (`POST /v1/responses`) into a chat-completions body, the pivot
 * the Anthropic translation starts from. Throws a RequestTranslationError naming the field it cannot express:
 * server-side state (`previous_response_id`, `conversation`, `store: true`, `background`, stored `prompt`s,
 * `item_reference` items), reasoning settings and items, and built-in tools (web search, file search, ...).
 *
 * Ignored because they do not change the answer: `include`, `metadata`, `truncation`, `service_tier`,
 * `safety_identifier`, `prompt_cache_key`, `text.verbosity`, `top_logprobs`, `stream_options`.
 */
export function responsesToChatRequest(body: unknown): OpenAIChatRequest {
  const request = requireObject(body, 'body');
  const model = requireNonEmptyString(request.model, 'model');
  rejectServerState(request);

  const messages: OpenAIChatMessage[] = [];
  if (request.instructions !== undefined && request.instructions !== null) {
    const instructions = requireString(request.instructions, 'instructions');
    if (instructions.length > 0) messages.push({ role: 'system', content: instructions });
  }
  appendInput(messages, request.input);

  const result: OpenAIChatRequest = { model, messages };
  const maxTokens = optionalPositiveInteger(request.max_output_tokens, 'max_output_tokens');
  if (maxTokens !== undefined) result.max_completion_tokens = maxTokens;
  const temperature = optionalNumber(request.temperature, 'temperature');
  if (temperature !== undefined) result.temperature = temperature;
  const topP = optionalNumber(request.top_p, 'top_p');
  if (topP !== undefined) result.top_p = topP;
  if (optionalBoolean(request.stream, 'stream') === true) {
    result.stream = true;
    result.stream_options = { include_usage: true };
  }
  if (request.user !== undefined && request.user !== null) {
    const user = requireString(request.user, 'user');
    if (user.length > 0) result.user = user;
  }
  applyTools(result, request);
  const format = responseFormat(request.text);
  if (format) result.response_format = format;
  return result;
}

function rejectServerState(request: JsonObject): void {
  for (const field of ['previous_response_id', 'conversation', 'prompt'] as const) {
    if (request[field] !== undefined && request[field] !== null) throw unsupported(field, field);
  }
  if (optionalBoolean(request.store, 'store') === true) {
    throw unsupported('store', 'store: true (a stored response)');
  }
  if (optionalBoolean(request.background, 'background') === true)
    throw unsupported('background', 'background');
  if (request.reasoning !== undefined && request.reasoning !== null) {
    const reasoning = requireObject(request.reasoning, 'reasoning');
    const set = Object.keys(reasoning).find((key) => reasoning[key] !== null && reasoning[key] !== undefined);
    if (set !== undefined) throw unsupported(`reasoning.${set}`, `reasoning.${set}`);
  }
}

function appendInput(messages: OpenAIChatMessage[], input: unknown): void {
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return;
  }
  const items = requireArray(input, 'input');
  if (items.length === 0) throw new RequestTranslationError('input must not be empty', 'input');
  items.forEach((item, i) => appendItem(messages, item, `input[${i}]`));
}

function appendItem(messages: OpenAIChatMessage[], item: unknown, param: string): void {
  const object = requireObject(item, param);
  switch (object.type ?? 'message') {
    case 'message':
      messages.push(messageItem(object, param));
      return;
    case 'function_call': {
      const call = {
        id: requireNonEmptyString(object.call_id, `${param}.call_id`),
        type: 'function' as const,
        function: {
          name: requireNonEmptyString(object.name, `${param}.name`),
          arguments: requireString(object.arguments, `${param}.arguments`),
        },
      };
      // Chat carries calls on the assistant message they follow.
      const previous = messages.at(-1);
      if (previous?.role === 'assistant') previous.tool_calls = [...(previous.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    case 'function_call_output':
      messages.push({
        role: 'tool',
        tool_call_id: requireNonEmptyString(object.call_id, `${param}.call_id`),
        content: outputText(object.output, `${param}.output`),
      });
      return;
    case 'item_reference':
      throw new RequestTranslationError(
        `${param} is an item_reference to a stored item, and responses are not stored for this upstream: ` +
          'send the items themselves (clients that refer back by id do so unless told store: false)',
        `${param}.type`,
      );
    default:
      throw unsupported(`${param}.type`, `an input item of type ${JSON.stringify(object.type)}`);
  }
}

function messageItem(item: JsonObject, param: string): OpenAIChatMessage {
  const where = `${param}.content`;
  switch (item.role) {
    case 'user':
      return { role: 'user', content: userContent(item.content, where) };
    case 'system':
    case 'developer':
      return { role: item.role, content: plainText(item.content, where, ['input_text']) };
    case 'assistant':
      return {
        role: 'assistant',
        content: plainText(item.content, where, ['output_text', 'input_text', 'refusal']),
      };
    default:
      throw new RequestTranslationError(
        `${param}.role must be one of user, assistant, system, developer`,
        `${param}.role`,
      );
  }
}

function userContent(content: unknown, param: string): string | OpenAIContentPart[] {
  if (typeof content === 'string') return content;
  return requireArray(content, param).map((item, j): OpenAIContentPart => {
    const where = `${param}[${j}]`;
    const part = requireObject(item, where);
    if (part.type === 'input_text') return { type: 'text', text: requireString(part.text, `${where}.text`) };
    if (part.type === 'input_image') {
      if (part.image_url === undefined || part.image_url === null) {
        throw unsupported(`${where}.file_id`, 'an image given by file_id');
      }
      const image: OpenAIContentPart = {
        type: 'image_url',
        image_url: { url: requireNonEmptyString(part.image_url, `${where}.image_url`) },
      };
      if (part.detail === 'low' || part.detail === 'high' || part.detail === 'auto') {
        image.image_url.detail = part.detail;
      }
      return image;
    }
    throw unsupported(`${where}.type`, `a ${JSON.stringify(part.type)} content part`);
  });
}

/** Content that may only hold text, as a string; the part types allowed depend on the role. */
function plainText(content: unknown, param: string, allowed: string[]): string {
  if (typeof content === 'string') return content;
  return requireArray(content, param)
    .map((item, j) => {
      const where = `${param}[${j}]`;
      const part = requireObject(item, where);
      if (!allowed.includes(part.type as string)) {
        throw unsupported(`${where}.type`, `a ${JSON.stringify(part.type)} content part here`);
      }
      return part.type === 'refusal'
        ? requireString(part.refusal, `${where}.refusal`)
        : requireString(part.text, `${where}.text`);
    })
    .join('');
}

function outputText(output: unknown, param: string): string {
  if (typeof output === 'string') return output;
  return plainText(output, param, ['input_text']);
}

function applyTools(result: OpenAIChatRequest, request: JsonObject): void {
  const tools =
    request.tools === undefined || request.tools === null ? [] : requireArray(request.tools, 'tools');
  if (tools.length > 0) result.tools = tools.map((tool, i) => functionTool(tool, `tools[${i}]`));
  const choice = toolChoice(request.tool_choice);
  if (choice !== undefined && tools.length > 0) result.tool_choice = choice;
  const parallel = optionalBoolean(request.parallel_tool_calls, 'parallel_tool_calls');
  if (parallel !== undefined && tools.length > 0) result.parallel_tool_calls = parallel;
}

function functionTool(tool: unknown, param: string): OpenAIFunctionTool {
  const object = requireObject(tool, param);
  if (object.type !== 'function') {
    throw unsupported(`${param}.type`, `the built-in tool ${JSON.stringify(object.type)}`);
  }
  const fn: OpenAIFunctionTool['function'] = { name: requireNonEmptyString(object.name, `${param}.name`) };
  if (object.description !== undefined && object.description !== null) {
    fn.description = requireString(object.description, `${param}.description`);
  }
  if (object.parameters !== undefined && object.parameters !== null) {
    fn.parameters = requireObject(object.parameters, `${param}.parameters`);
  }
  const strict = optionalBoolean(object.strict, `${param}.strict`);
  if (strict !== undefined) fn.strict = strict;
  return { type: 'function', function: fn };
}

function toolChoice(choice: unknown): OpenAIToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  const object = requireObject(choice, 'tool_choice');
  if (object.type === 'function') {
    return { type: 'function', function: { name: requireNonEmptyString(object.name, 'tool_choice.name') } };
  }
  throw unsupported('tool_choice', `tool_choice of type ${JSON.stringify(object.type)}`);
}

function responseFormat(text: unknown): OpenAIResponseFormat | undefined {
  if (text === undefined || text === null) return undefined;
  const config = requireObject(text, 'text');
  if (config.format === undefined || config.format === null) return undefined;
  const format = requireObject(config.format, 'text.format');
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const jsonSchema: Extract<OpenAIResponseFormat, { type: 'json_schema' }>['json_schema'] = {
        name: requireNonEmptyString(format.name, 'text.format.name'),
        schema: requireObject(format.schema, 'text.format.schema'),
      };
      if (typeof format.description === 'string') jsonSchema.description = format.description;
      const strict = optionalBoolean(format.strict, 'text.format.strict');
      if (strict !== undefined) jsonSchema.strict = strict;
      return { type: 'json_schema', json_schema: jsonSchema };
    }
    default:
      throw unsupported('text.format.type', `a text format of type ${JSON.stringify(format.type)}`);
  }
}
