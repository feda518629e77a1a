import { invalidField } from '../common/api-error';
import { isPlainObject } from '../common/json-values';
import { checkRequestEnvelope, type ServiceOptions } from './request-envelope';

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

export interface ChatMessage {
  role: ChatRole;
  content?: string | Array<Record<string, unknown>> | null;
  [field: string]: unknown;
}

/** A chat-completions body: the fields we read are checked; all others pass through untouched. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  user?: string;
  metadata?: Record<string, unknown>;
  service?: ServiceOptions;
  [field: string]: unknown;
}

const MAX_MESSAGES = 10_000;

/**
 * Checks the parts of a chat body that the service reads or that OpenAI-compatible providers reject
 * with unhelpful errors, and leaves everything else (tools, response_format, n, seed, ...) to the
 * provider, which is the authority on its own parameters.
 */
export function parseChatRequest(body: unknown): ChatRequest {
  checkRequestEnvelope(body);
  checkMessages(body.messages);
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') {
    throw invalidField('user', 'invalid_user_id', 'user must be a string.');
  }
  if (
    isPlainObject(body.metadata) &&
    body.metadata.profile_id !== undefined &&
    typeof body.metadata.profile_id !== 'string'
  ) {
    throw invalidField('metadata.profile_id', 'invalid_user_id', 'metadata.profile_id must be a string.');
  }
  return body as ChatRequest;
}

function checkMessages(messages: unknown): void {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidField('messages', 'invalid_messages', 'messages must be a non-empty array.');
  }
  if (messages.length > MAX_MESSAGES) {
    throw invalidField('messages', 'invalid_messages', `messages must have at most ${MAX_MESSAGES} items.`);
  }
  messages.forEach((message: unknown, index) => {
    const param = `messages[${index}]`;
    if (!isPlainObject(message)) throw invalidField(param, 'invalid_messages', `${param} must be an object.`);
    if (!CHAT_ROLES.includes(message.role as ChatRole)) {
      throw invalidField(
        `${param}.role`,
        'invalid_messages',
        `${param}.role must be one of ${CHAT_ROLES.join(', ')}.`,
      );
    }
    const content = message.content;
    const contentOk =
      typeof content === 'string' ||
      (Array.isArray(content) && content.every((part) => isPlainObject(part))) ||
      ((content === null || content === undefined) &&
        (message.role === 'assistant' || message.role === 'function'));
    if (!contentOk) {
      throw invalidField(
        `${param}.content`,
        'invalid_messages',
        `${param}.content must be a string or an array of content parts` +
          (message.role === 'assistant' ? ' (or null with tool_calls)' : '') +
          '.',
      );
    }
  });
}

/** The text of a message's content: strings as they are, text parts joined, other parts left out. */
export function messageText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

/** The user's last message before the last assistant message: the one a follow-up may refer to. */
export function previousUserMessage(messages: ChatMessage[]): string | undefined {
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  for (let i = lastAssistant - 1; i >= 0; i--) {
    if (messages[i].role !== 'user') continue;
    const text = messageText(messages[i].content);
    if (text.length > 0) return text;
  }
  return undefined;
}

/** The text of the user messages that follow the last assistant message: this turn's question. */
export function latestUserMessages(messages: ChatMessage[]): string[] {
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages
    .slice(lastAssistant + 1)
    .filter((message) => message.role === 'user')
    .map((message) => messageText(message.content));
}

/** Adds the context to the first system or developer message, or puts a system message first. */
export function injectContext(messages: ChatMessage[], context: string): ChatMessage[] {
  if (!context) return messages;
  const index = messages.findIndex((m) => m.role === 'system' || m.role === 'developer');
  if (index === -1) return [{ role: 'system', content: context }, ...messages];
  const target = messages[index];
  const content = target.content;
  const injected: ChatMessage =
    typeof content === 'string'
      ? { ...target, content: content ? `${content}\n\n${context}` : context }
      : { ...target, content: [...(Array.isArray(content) ? content : []), { type: 'text', text: context }] };
  return messages.map((message, i) => (i === index ? injected : message));
}
