import { isPlainObject, type JsonObject } from '../common/json-values';
import type {
  OpenAIAssistantMessage,
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAIContentPart,
  OpenAIFunctionTool,
  OpenAIToolCall,
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
 * Translates an Anthropic Messages request body (`POST /v1/messages`) into a chat-completions body for an
 * OpenAI-compatible upstream. Throws a RequestTranslationError naming the field it cannot express.
 *
 * Ignored because they change how, not what, the model answers: `cache_control` marks, `thinking` (chat has no
 * portable equivalent; the answer simply has no thinking blocks), `output_config.effort`, `service_tier`, and
 * thinking blocks replayed in assistant history (another provider cannot use them).
 */
export function anthropicToChatRequest(body: unknown): OpenAIChatRequest {
  const request = requireObject(body, 'body');
  const model = requireNonEmptyString(request.model, 'model');
  const turns = requireArray(request.messages, 'messages');
  if (turns.length === 0) throw new RequestTranslationError('messages must not be empty', 'messages');
  if (optionalNumber(request.top_k, 'top_k') !== undefined) throw unsupported('top_k', 'top_k');
  if (Array.isArray(request.mcp_servers) && request.mcp_servers.length > 0) {
    throw unsupported('mcp_servers', 'mcp_servers');
  }

  const messages: OpenAIChatMessage[] = [];
  const system = systemText(request.system);
  if (system.length > 0) messages.push({ role: 'system', content: system });
  turns.forEach((turn, i) => messages.push(...chatMessages(turn, `messages[${i}]`)));
  const last = requireObject(turns.at(-1), `messages[${turns.length - 1}]`);
  if (last.role === 'assistant') {
    // Anthropic continues a final assistant message (prefill); chat completions would start a new one.
    throw unsupported(`messages[${turns.length - 1}]`, 'a final assistant message (prefill)');
  }

  const result: OpenAIChatRequest = { model, messages };
  const maxTokens = optionalPositiveInteger(request.max_tokens, 'max_tokens');
  if (maxTokens !== undefined) result.max_completion_tokens = maxTokens;
  const stop = stopSequences(request.stop_sequences);
  if (stop.length > 0) result.stop = stop;
  const temperature = optionalNumber(request.temperature, 'temperature');
  if (temperature !== undefined) result.temperature = temperature;
  const topP = optionalNumber(request.top_p, 'top_p');
  if (topP !== undefined) result.top_p = topP;
  if (optionalBoolean(request.stream, 'stream') === true) {
    result.stream = true;
    result.stream_options = { include_usage: true };
  }
  const user = metadataUserId(request.metadata);
  if (user !== undefined) result.user = user;
  applyTools(result, request.tools, request.tool_choice);
  const format = outputFormat(request.output_config);
  if (format) result.response_format = format;
  return result;
}

function systemText(system: unknown): string {
  if (system === undefined || system === null) return '';
  if (typeof system === 'string') return system;
  return requireArray(system, 'system')
    .map((block, i) => textOfTextBlock(block, `system[${i}]`))
    .filter((text) => text.length > 0)
    .join('\n\n');
}

function textOfTextBlock(block: unknown, param: string): string {
  const object = requireObject(block, param);
  if (object.type !== 'text')
    throw unsupported(`${param}.type`, `a ${JSON.stringify(object.type)} block here`);
  return requireString(object.text, `${param}.text`);
}

function chatMessages(turn: unknown, param: string): OpenAIChatMessage[] {
  const message = requireObject(turn, param);
  if (message.role === 'user') return userMessages(message.content, `${param}.content`);
  if (message.role === 'assistant') return [assistantMessage(message.content, `${param}.content`)];
  throw new RequestTranslationError(`${param}.role must be "user" or "assistant"`, `${param}.role`);
}

/** Tool results become `tool` messages, which chat wants right after the assistant's calls, then the rest. */
function userMessages(content: unknown, param: string): OpenAIChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const toolMessages: OpenAIChatMessage[] = [];
  const parts: OpenAIContentPart[] = [];
  requireArray(content, param).forEach((item, j) => {
    const where = `${param}[${j}]`;
    const block = requireObject(item, where);
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: requireString(block.text, `${where}.text`) });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: imageUrl(block.source, `${where}.source`) } });
        break;
      case 'tool_result':
        toolMessages.push({
          role: 'tool',
          tool_call_id: requireNonEmptyString(block.tool_use_id, `${where}.tool_use_id`),
          content: toolResultText(block.content, `${where}.content`),
        });
        break;
      default:
        throw unsupported(`${where}.type`, `a ${JSON.stringify(block.type)} block`);
    }
  });
  if (parts.length === 0) return toolMessages;
  const [first] = parts;
  const single = parts.length === 1 && first.type === 'text' ? first.text : undefined;
  return [...toolMessages, { role: 'user', content: single ?? parts }];
}

function imageUrl(source: unknown, param: string): string {
  const object = requireObject(source, param);
  if (object.type === 'base64') {
    const mediaType = requireNonEmptyString(object.media_type, `${param}.media_type`);
    return `data:${mediaType};base64,${requireString(object.data, `${param}.data`)}`;
  }
  if (object.type === 'url') return requireNonEmptyString(object.url, `${param}.url`);
  throw unsupported(`${param}.type`, `an image source of type ${JSON.stringify(object.type)}`);
}

function toolResultText(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return requireArray(content, param)
    .map((block, k) => textOfTextBlock(block, `${param}[${k}]`))
    .join('\n');
}

const IGNORED_ASSISTANT_BLOCKS = new Set(['thinking', 'redacted_thinking']);

function assistantMessage(content: unknown, param: string): OpenAIAssistantMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const toolCalls: OpenAIToolCall[] = [];
  requireArray(content, param).forEach((item, j) => {
    const where = `${param}[${j}]`;
    const block = requireObject(item, where);
    if (block.type === 'text') {
      texts.push(requireString(block.text, `${where}.text`));
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: requireNonEmptyString(block.id, `${where}.id`),
        type: 'function',
        function: {
          name: requireNonEmptyString(block.name, `${where}.name`),
          arguments: JSON.stringify(block.input ?? {}),
        },
      });
    } else if (!IGNORED_ASSISTANT_BLOCKS.has(block.type as string)) {
      throw unsupported(`${where}.type`, `a ${JSON.stringify(block.type)} block`);
    }
  });
  const message: OpenAIAssistantMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('\n') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

function stopSequences(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return requireArray(value, 'stop_sequences')
    .map((sequence, i) => requireString(sequence, `stop_sequences[${i}]`))
    .filter((sequence) => sequence.length > 0);
}

/** OpenAI refuses a `user` longer than this; Claude Code's user ids are longer. */
const MAX_CHAT_USER_CHARS = 64;

/** `metadata.user_id` as chat's `user` (an abuse-monitoring hint), left out when OpenAI would refuse it. */
function metadataUserId(metadata: unknown): string | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  const userId = requireObject(metadata, 'metadata').user_id;
  if (userId === undefined || userId === null) return undefined;
  const text = requireString(userId, 'metadata.user_id');
  return text.length > 0 && text.length <= MAX_CHAT_USER_CHARS ? text : undefined;
}

function applyTools(result: OpenAIChatRequest, tools: unknown, toolChoice: unknown): void {
  if (tools === undefined || tools === null) return;
  const list = requireArray(tools, 'tools');
  if (list.length === 0) return;
  result.tools = list.map((tool, i) => functionTool(tool, `tools[${i}]`));
  if (toolChoice === undefined || toolChoice === null) return;
  const choice = requireObject(toolChoice, 'tool_choice');
  const mapped: Record<string, OpenAIToolChoice> = { auto: 'auto', any: 'required', none: 'none' };
  if (choice.type === 'tool') {
    result.tool_choice = {
      type: 'function',
      function: { name: requireNonEmptyString(choice.name, 'tool_choice.name') },
    };
  } else if (typeof choice.type === 'string' && choice.type in mapped) {
    result.tool_choice = mapped[choice.type];
  } else {
    throw new RequestTranslationError('tool_choice.type must be auto, any, tool or none', 'tool_choice.type');
  }
  if (optionalBoolean(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use') === true) {
    result.parallel_tool_calls = false;
  }
}

/** Client tools only: server tools (web search, code execution, bash, ...) run inside Anthropic's API. */
function functionTool(tool: unknown, param: string): OpenAIFunctionTool {
  const object = requireObject(tool, param);
  if (object.type !== undefined && object.type !== null && object.type !== 'custom') {
    throw unsupported(`${param}.type`, `the server tool ${JSON.stringify(object.type)}`);
  }
  const fn: OpenAIFunctionTool['function'] = {
    name: requireNonEmptyString(object.name, `${param}.name`),
    parameters: requireObject(object.input_schema, `${param}.input_schema`),
  };
  if (object.description !== undefined && object.description !== null) {
    fn.description = requireString(object.description, `${param}.description`);
  }
  const strict = optionalBoolean(object.strict, `${param}.strict`);
  if (strict !== undefined) fn.strict = strict;
  return { type: 'function', function: fn };
}

function outputFormat(outputConfig: unknown): OpenAIChatRequest['response_format'] | undefined {
  if (!isPlainObject(outputConfig) || outputConfig.format === undefined || outputConfig.format === null) {
    return undefined;
  }
  const format = requireObject(outputConfig.format, 'output_config.format');
  if (format.type !== 'json_schema') {
    throw unsupported('output_config.format.type', `an output format of type ${JSON.stringify(format.type)}`);
  }
  const schema: JsonObject = requireObject(format.schema, 'output_config.format.schema');
  return { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } };
}
