import type {
  AnthropicImageBlock,
  AnthropicMessageParam,
  AnthropicMessagesRequest,
  AnthropicRequestBlock,
  AnthropicTool,
  AnthropicToolChoice,
} from './anthropic-types';
import { isPlainObject, type JsonObject } from '../common/json-values';
import { RequestTranslationError } from './request-translation-error';
import type {
  OpenAIAssistantMessage,
  OpenAIChatRequest,
  OpenAIFunctionTool,
  OpenAIToolChoice,
  OpenAIUserMessage,
} from './openai-types';

/** The OpenAI-shaped request cannot be expressed as an Anthropic request; callers should answer 400. */
export class InvalidChatRequestError extends RequestTranslationError {}

export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicRequestOptions {
  /** Used when the request sets neither `max_completion_tokens` nor `max_tokens` (Anthropic requires one). */
  defaultMaxTokens?: number;
}

/** Translates an OpenAI chat-completions request body into an Anthropic Messages request body. */
export function toAnthropicRequest(
  request: OpenAIChatRequest,
  options: AnthropicRequestOptions = {},
): AnthropicMessagesRequest {
  if (!Array.isArray(request.messages))
    throw new InvalidChatRequestError('messages must be an array', 'messages');
  if (typeof request.n === 'number' && request.n > 1) {
    throw new InvalidChatRequestError('n > 1 is not supported by the anthropic provider', 'n');
  }

  const systemTexts: string[] = [];
  const turns: AnthropicMessageParam[] = [];
  request.messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    if (!isPlainObject(message)) throw new InvalidChatRequestError(`${where} must be an object`, where);
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = plainText(message.content, `${where}.content`);
        if (text.length > 0) systemTexts.push(text);
        break;
      }
      case 'user':
        turns.push({ role: 'user', content: userBlocks(message.content, `${where}.content`) });
        break;
      case 'assistant':
        turns.push({ role: 'assistant', content: assistantBlocks(message, where) });
        break;
      case 'tool':
        turns.push({
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: requireString(message.tool_call_id, `${where}.tool_call_id`),
              content: plainText(message.content, `${where}.content`),
            },
          ],
        });
        break;
      default:
        throw new InvalidChatRequestError(
          `${where}.role ${JSON.stringify((message as { role?: unknown }).role)} is not supported`,
          `${where}.role`,
        );
    }
  });

  const messages = mergeConsecutiveRoles(turns.filter((turn) => turn.content.length > 0));
  if (messages.length === 0) {
    throw new InvalidChatRequestError('at least one non-system message with content is required', 'messages');
  }

  const result: AnthropicMessagesRequest = {
    model: request.model,
    messages,
    max_tokens:
      request.max_completion_tokens ??
      request.max_tokens ??
      options.defaultMaxTokens ??
      DEFAULT_ANTHROPIC_MAX_TOKENS,
  };
  if (systemTexts.length > 0) result.system = systemTexts.join('\n\n');
  const stopSequences = toStopSequences(request.stop);
  if (stopSequences) result.stop_sequences = stopSequences;
  // Anthropic accepts 0..1 where OpenAI accepts 0..2; clamping keeps "hot" requests working instead of 400ing.
  if (typeof request.temperature === 'number')
    result.temperature = Math.min(Math.max(request.temperature, 0), 1);
  if (typeof request.top_p === 'number') result.top_p = request.top_p;
  if (request.stream === true) result.stream = true;
  if (typeof request.user === 'string' && request.user.length > 0)
    result.metadata = { user_id: request.user };
  if (Array.isArray(request.tools) && request.tools.length > 0) {
    result.tools = request.tools.map((tool, i) => toAnthropicTool(tool, `tools[${i}]`));
    const toolChoice = toAnthropicToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (toolChoice) result.tool_choice = toolChoice;
  }
  return result;
}

function requireString(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new InvalidChatRequestError(`${where} must be a string`, where);
  return value;
}

/** Content that may only hold text (system, developer and tool messages). */
function plainText(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content))
    throw new InvalidChatRequestError(`${where} must be a string or an array`, where);
  return content
    .map((part: unknown, j) => {
      if (isPlainObject(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
      throw new InvalidChatRequestError(`${where}[${j}] must be a text part`, `${where}[${j}]`);
    })
    .join('\n');
}

function userBlocks(content: OpenAIUserMessage['content'], where: string): AnthropicRequestBlock[] {
  if (typeof content === 'string') return textBlocks(content);
  if (!Array.isArray(content))
    throw new InvalidChatRequestError(`${where} must be a string or an array`, where);
  return content.flatMap((part: unknown, j): AnthropicRequestBlock[] => {
    const partWhere = `${where}[${j}]`;
    if (!isPlainObject(part)) throw new InvalidChatRequestError(`${partWhere} must be an object`, partWhere);
    if (part.type === 'text') return textBlocks(requireString(part.text, `${partWhere}.text`));
    if (part.type === 'image_url' && isPlainObject(part.image_url)) {
      return [toImageBlock(requireString(part.image_url.url, `${partWhere}.image_url.url`), partWhere)];
    }
    throw new InvalidChatRequestError(
      `${partWhere}.type ${JSON.stringify(part.type)} is not supported by the anthropic provider`,
      `${partWhere}.type`,
    );
  });
}

function assistantBlocks(message: OpenAIAssistantMessage, where: string): AnthropicRequestBlock[] {
  const blocks: AnthropicRequestBlock[] = [];
  const { content } = message;
  if (typeof content === 'string') {
    blocks.push(...textBlocks(content));
  } else if (Array.isArray(content)) {
    content.forEach((part: unknown, j) => {
      if (isPlainObject(part) && part.type === 'text' && typeof part.text === 'string') {
        blocks.push(...textBlocks(part.text));
      } else if (isPlainObject(part) && part.type === 'refusal' && typeof part.refusal === 'string') {
        blocks.push(...textBlocks(part.refusal));
      } else {
        throw new InvalidChatRequestError(
          `${where}.content[${j}] must be a text or refusal part`,
          `${where}.content[${j}]`,
        );
      }
    });
  }
  const toolCalls: unknown = message.tool_calls ?? [];
  if (!Array.isArray(toolCalls)) {
    throw new InvalidChatRequestError(`${where}.tool_calls must be an array`, `${where}.tool_calls`);
  }
  toolCalls.forEach((call: unknown, j) => {
    const callWhere = `${where}.tool_calls[${j}]`;
    if (!isPlainObject(call) || !isPlainObject(call.function)) {
      throw new InvalidChatRequestError(`${callWhere} must be a function tool call`, callWhere);
    }
    blocks.push({
      type: 'tool_use',
      id: requireString(call.id, `${callWhere}.id`),
      name: requireString(call.function.name, `${callWhere}.function.name`),
      input: parseToolArguments(call.function.arguments, `${callWhere}.function.arguments`),
    });
  });
  return blocks;
}

function textBlocks(text: string): AnthropicRequestBlock[] {
  // Anthropic rejects empty text blocks.
  return text.length > 0 ? [{ type: 'text', text }] : [];
}

function parseToolArguments(value: unknown, where: string): JsonObject {
  if (value === undefined || value === null || value === '') return {};
  if (typeof value !== 'string') throw new InvalidChatRequestError(`${where} must be a JSON string`, where);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidChatRequestError(`${where} is not valid JSON`, where);
  }
  if (!isPlainObject(parsed)) throw new InvalidChatRequestError(`${where} must encode a JSON object`, where);
  return parsed;
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

function toImageBlock(url: string, where: string): AnthropicImageBlock {
  const dataUrl = DATA_URL.exec(url);
  if (dataUrl) {
    const [, mediaType, parameters, data] = dataUrl;
    if (!mediaType.startsWith('image/') || !parameters.split(';').includes('base64')) {
      throw new InvalidChatRequestError(`${where} must be a base64 image data URL`, `${where}.image_url.url`);
    }
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new InvalidChatRequestError(`${where} must be a data: or http(s) URL`, `${where}.image_url.url`);
}

function mergeConsecutiveRoles(turns: AnthropicMessageParam[]): AnthropicMessageParam[] {
  const merged: AnthropicMessageParam[] = [];
  for (const turn of turns) {
    const previous = merged.at(-1);
    if (previous?.role === turn.role) previous.content.push(...turn.content);
    else merged.push({ role: turn.role, content: [...turn.content] });
  }
  for (const turn of merged) {
    // Anthropic wants tool results ahead of any other content in a user turn.
    if (turn.role === 'user') turn.content = stablePartition(turn.content, (b) => b.type === 'tool_result');
  }
  return merged;
}

function stablePartition<T>(items: T[], first: (item: T) => boolean): T[] {
  return [...items.filter(first), ...items.filter((item) => !first(item))];
}

function toStopSequences(stop: OpenAIChatRequest['stop']): string[] | undefined {
  if (typeof stop === 'string') return stop.length > 0 ? [stop] : undefined;
  if (Array.isArray(stop)) {
    const sequences = stop.filter((s): s is string => typeof s === 'string' && s.length > 0);
    return sequences.length > 0 ? sequences : undefined;
  }
  return undefined;
}

function toAnthropicTool(tool: OpenAIFunctionTool, where: string): AnthropicTool {
  if (!isPlainObject(tool) || tool.type !== 'function' || !isPlainObject(tool.function)) {
    throw new InvalidChatRequestError(`${where} must be a function tool`, where);
  }
  const { name, description, parameters } = tool.function;
  const result: AnthropicTool = {
    name: requireString(name, `${where}.function.name`),
    input_schema: isPlainObject(parameters) ? parameters : { type: 'object', properties: {} },
  };
  if (typeof description === 'string') result.description = description;
  return result;
}

function toAnthropicToolChoice(
  choice: OpenAIToolChoice | undefined,
  parallelToolCalls: boolean | undefined,
): AnthropicToolChoice | undefined {
  const disableParallel = parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...disableParallel };
  if (isPlainObject(choice) && choice.type === 'function' && isPlainObject(choice.function)) {
    return {
      type: 'tool',
      name: requireString(choice.function.name, 'tool_choice.function.name'),
      ...disableParallel,
    };
  }
  if (choice === 'auto' || parallelToolCalls === false) return { type: 'auto', ...disableParallel };
  if (choice === undefined || choice === null) return undefined;
  throw new InvalidChatRequestError('tool_choice is not supported', 'tool_choice');
}
