import type { IncomingHttpHeaders } from 'node:http';
import { invalidField } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import { rankingQuery } from '../../memories/ranking-query';
import {
  anthropicPreviousUserText,
  anthropicQuestion,
  anthropicTurnUserTexts,
} from '../../upstream/protocol-translation';
import { CheckedRequest, checkRequestEnvelope } from '../request-envelope';
import { resolveUserId, userIdHeader } from '../user-id';
import { InboundProtocol, InboundTurn, inboundTurn } from './inbound-protocol';

const MAX_MESSAGES = 10_000;

/**
 * `POST /v1/messages` (Anthropic Messages API): the context is added to `system`, as one more text
 * block when the caller sends blocks. Errors on this route take Anthropic's shape.
 */
export const messagesProtocol: InboundProtocol = {
  name: 'messages',

  parse(body: unknown, headers: IncomingHttpHeaders): InboundTurn {
    const request = checkMessagesRequest(body);
    const metadata = isPlainObject(request.metadata) ? request.metadata : {};
    const userId = resolveUserId([userIdHeader(headers), ['metadata.user_id', metadata.user_id]]);
    return inboundTurn(request, headers, {
      userId,
      question: rankingQuery(anthropicQuestion(request), anthropicPreviousUserText(request)),
      userTexts: anthropicTurnUserTexts(request),
    });
  },

  inject(body: JsonObject, contextText: string): JsonObject {
    if (!contextText) return body;
    const { system } = body;
    if (Array.isArray(system)) {
      return { ...body, system: [...(system as unknown[]), { type: 'text', text: contextText }] };
    }
    const own = typeof system === 'string' ? system : '';
    return { ...body, system: own ? `${own}\n\n${contextText}` : contextText };
  },
};

function checkMessagesRequest(body: unknown): CheckedRequest {
  checkRequestEnvelope(body);
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES) {
    throw invalidField(
      'messages',
      'invalid_messages',
      `messages must be an array of 1 to ${MAX_MESSAGES} messages.`,
    );
  }
  messages.forEach((message: unknown, index) => {
    const param = `messages[${index}]`;
    if (!isPlainObject(message) || (message.role !== 'user' && message.role !== 'assistant')) {
      throw invalidField(
        param,
        'invalid_messages',
        `${param} must be an object with role user or assistant.`,
      );
    }
    const { content } = message;
    if (typeof content !== 'string' && !(Array.isArray(content) && content.every(isPlainObject))) {
      throw invalidField(
        `${param}.content`,
        'invalid_messages',
        `${param}.content must be a string or content blocks.`,
      );
    }
  });
  const { system } = body;
  if (
    system !== undefined &&
    typeof system !== 'string' &&
    !(Array.isArray(system) && system.every((block) => isPlainObject(block) && block.type === 'text'))
  ) {
    throw invalidField('system', 'invalid_system', 'system must be a string or an array of text blocks.');
  }
  return body;
}
