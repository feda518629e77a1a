import type { IncomingHttpHeaders } from 'node:http';
import { headerText } from '../../common/header-text';
import type { JsonObject } from '../../common/json-values';
import { parseRequestTraitSchemas } from '../../traits/request-trait-schemas';
import { latestUserMessages, parseChatRequest } from '../chat-request';
import { injectContext } from '../context-text';
import { resolveUserId, userIdHeader } from '../user-id';
import { InboundProtocol, InboundTurn } from './inbound-protocol';

/** `POST /v1/chat/completions`: the context goes into the first system (or developer) message. */
export const chatCompletionsProtocol: InboundProtocol = {
  name: 'chat',

  parse(body: unknown, headers: IncomingHttpHeaders): InboundTurn {
    const request = parseChatRequest(body);
    const userId = resolveUserId([
      userIdHeader(headers),
      ['metadata.profile_id', request.metadata?.profile_id],
      ['user', request.user],
    ]);
    const { service, ...forwarded } = request;
    const userTexts = latestUserMessages(request.messages);
    return {
      body: forwarded,
      model: request.model,
      stream: request.stream === true,
      userId,
      question: userTexts.join('\n'),
      userTexts,
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
    return {
      ...body,
      messages: injectContext(body.messages as Parameters<typeof injectContext>[0], contextText),
    };
  },
};

/** The per-request trait schemas of the X-Service-Traits header and the body (the body wins per key). */
export function serviceTraits(headers: IncomingHttpHeaders, fromBody: unknown[] | undefined) {
  const header = headerText(headers['x-service-traits'], 'X-Service-Traits', 'invalid_service_traits');
  return parseRequestTraitSchemas(header, fromBody);
}
