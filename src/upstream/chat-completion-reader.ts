import { isPlainObject } from '../common/json-values';
import type { OpenAIUsage } from './openai-types';
import { readChatUsage } from './sse';

/** The parts of a `chat.completion` body the translations use, read from its first choice. */
export interface ChatCompletionParts {
  id: string | undefined;
  model: string | undefined;
  text: string;
  refusal: string | undefined;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  usage: OpenAIUsage | undefined;
}

/**
 * Reads a `chat.completion` body as an upstream sent it, defensively: missing or mistyped fields read as
 * absent, so a body without choices gives no text and no calls.
 */
export function readChatCompletion(completion: unknown): ChatCompletionParts {
  const body = isPlainObject(completion) ? completion : {};
  const choices: unknown[] = Array.isArray(body.choices) ? body.choices : [];
  const choice = choices.find((c) => isPlainObject(c) && (c.index ?? 0) === 0);
  const message = isPlainObject(choice) && isPlainObject(choice.message) ? choice.message : {};
  const calls: unknown[] = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return {
    id: typeof body.id === 'string' ? body.id : undefined,
    model: typeof body.model === 'string' ? body.model : undefined,
    text: contentText(message.content),
    refusal: typeof message.refusal === 'string' && message.refusal.length > 0 ? message.refusal : undefined,
    toolCalls: calls.flatMap((call) => {
      if (!isPlainObject(call) || !isPlainObject(call.function)) return [];
      const fn = call.function;
      return [
        {
          id: typeof call.id === 'string' ? call.id : '',
          name: typeof fn.name === 'string' ? fn.name : '',
          arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
        },
      ];
    }),
    finishReason:
      isPlainObject(choice) && typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    usage: readChatUsage(body.usage),
  };
}

/** Message content as text: a string as it is, the text of an array of parts joined. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { text: string } => isPlainObject(part) && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}
