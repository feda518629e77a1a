import { isPlainObject } from '../common/json-values';

// What the proxy ranks memories by (the question) and records (this turn's user texts) for the Responses and
// Messages protocols, read from request bodies that may be malformed: anything unreadable counts as no text.

/**
 * The question of a Responses request: a string `input`, else the text parts of the last user message item
 * (tool outputs after it do not replace it).
 */
export function responsesQuestion(body: unknown): string {
  const input = isPlainObject(body) ? body.input : undefined;
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    if (isResponsesMessage(input[i], 'user')) return responsesMessageText(input[i]);
  }
  return '';
}

/** The texts of the user message items after the last assistant item (a message or a call): this turn's. */
export function responsesTurnUserTexts(body: unknown): string[] {
  const input = isPlainObject(body) ? body.input : undefined;
  if (typeof input === 'string') return input.length > 0 ? [input] : [];
  if (!Array.isArray(input)) return [];
  const items: unknown[] = input;
  let start = 0;
  items.forEach((item, i) => {
    if (isAssistantItem(item)) start = i + 1;
  });
  return items
    .slice(start)
    .filter((item) => isResponsesMessage(item, 'user'))
    .map(responsesMessageText)
    .filter((text) => text.length > 0);
}

/** The texts of the user messages after the last assistant message; tool results are not user text. */
export function anthropicTurnUserTexts(body: unknown): string[] {
  const messages = isPlainObject(body) && Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  let start = 0;
  messages.forEach((message, i) => {
    if (isPlainObject(message) && message.role === 'assistant') start = i + 1;
  });
  return messages
    .slice(start)
    .filter((message) => isPlainObject(message) && message.role === 'user')
    .map(anthropicMessageText)
    .filter((text) => text.length > 0);
}

/**
 * The question of a Messages request: this turn's user texts, or, in a turn that only returns tool results,
 * the last user message that has text.
 */
export function anthropicQuestion(body: unknown): string {
  const turn = anthropicTurnUserTexts(body);
  if (turn.length > 0) return turn.join('\n');
  const messages = isPlainObject(body) && Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!isPlainObject(message) || message.role !== 'user') continue;
    const text = anthropicMessageText(message);
    if (text.length > 0) return text;
  }
  return '';
}

/** The user's last message before this turn (the one before the last assistant item), if any. */
export function responsesPreviousUserText(body: unknown): string | undefined {
  const input = isPlainObject(body) ? body.input : undefined;
  if (!Array.isArray(input)) return undefined;
  const items: unknown[] = input;
  const lastAssistant = items.map(isAssistantItem).lastIndexOf(true);
  return lastUserText(items.slice(0, Math.max(0, lastAssistant)), (item) =>
    isResponsesMessage(item, 'user') ? responsesMessageText(item) : '',
  );
}

/** The user's last message before this turn (the one before the last assistant message), if any. */
export function anthropicPreviousUserText(body: unknown): string | undefined {
  const messages = isPlainObject(body) && Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const lastAssistant = messages
    .map((message) => isPlainObject(message) && message.role === 'assistant')
    .lastIndexOf(true);
  return lastUserText(messages.slice(0, Math.max(0, lastAssistant)), (message) =>
    isPlainObject(message) && message.role === 'user' ? anthropicMessageText(message) : '',
  );
}

function lastUserText(items: unknown[], userText: (item: unknown) => string): string | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const text = userText(items[i]);
    if (text.length > 0) return text;
  }
  return undefined;
}

function isResponsesMessage(item: unknown, role: string): boolean {
  return isPlainObject(item) && (item.type === undefined || item.type === 'message') && item.role === role;
}

/** Output items a client sends back: assistant messages, and calls (`function_call`, `web_search_call`...). */
function isAssistantItem(item: unknown): boolean {
  if (!isPlainObject(item)) return false;
  if (item.role === 'assistant') return true;
  return typeof item.type === 'string' && (item.type === 'reasoning' || item.type.endsWith('_call'));
}

function responsesMessageText(item: unknown): string {
  const content = isPlainObject(item) ? item.content : undefined;
  if (typeof content === 'string') return content;
  return textParts(content, 'input_text');
}

function anthropicMessageText(message: unknown): string {
  const content = isPlainObject(message) ? message.content : undefined;
  if (typeof content === 'string') return content;
  return textParts(content, 'text');
}

function textParts(content: unknown, type: string): string {
  if (!Array.isArray(content)) return '';
  return (content as unknown[])
    .filter(
      (part): part is { text: string } =>
        isPlainObject(part) && part.type === type && typeof part.text === 'string',
    )
    .map((part) => part.text)
    .join('\n');
}
