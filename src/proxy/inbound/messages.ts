import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, invalidField } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import { anthropicQuestion, anthropicTurnUserTexts } from '../../upstream/protocol-translation';
import { checkServiceOptions, ServiceOptions } from '../chat-request';
import { resolveUserId, userIdHeader } from '../user-id';
import { serviceTraits } from './chat-completions';
import { InboundProtocol, InboundTurn } from './inbound-protocol';

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
    const { service, ...forwarded } = request;
    return {
      body: forwarded,
      model: request.model as string,
      stream: request.stream === true,
      userId,
      question: anthropicQuestion(request),
      userTexts: anthropicTurnUserTexts(request),
      options: {
        skipInjection: service?.skipInjection === true,
        skipExtraction: service?.skipExtraction === true,
        debug: service?.debug === true,
      },
      traitOverrides: serviceTraits(headers, service?.traits),
    };
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

function checkMessagesRequest(body: unknown): JsonObject & { service?: ServiceOptions } {
  if (!isPlainObject(body))
    throw new ApiError(400, 'invalid_json', 'The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model.trim() === '' || body.model.length > 256) {
    throw invalidField(
      'model',
      'invalid_model',
      'model must be a non-empty string of at most 256 characters.',
    );
  }
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
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    throw invalidField('stream', 'invalid_stream', 'stream must be a boolean.');
  }
  if (body.metadata !== undefined && !isPlainObject(body.metadata)) {
    throw invalidField('metadata', 'invalid_metadata', 'metadata must be an object.');
  }
  checkServiceOptions(body.service);
  return body;
}
