import type { IncomingHttpHeaders } from 'node:http';
import type { JsonObject } from '../../common/json-values';
import { rankingQuery } from '../../memories/ranking-query';
import { injectContext, latestUserMessages, parseChatRequest, previousUserMessage } from '../chat-request';
import { resolveUserId, userIdHeader } from '../user-id';
import { InboundProtocol, InboundTurn, inboundTurn } from './inbound-protocol';

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
    const userTexts = latestUserMessages(request.messages);
    const question = rankingQuery(userTexts.join('\n'), previousUserMessage(request.messages));
    return inboundTurn(request, headers, { userId, question, userTexts });
  },

  inject(body: JsonObject, contextText: string): JsonObject {
    if (!contextText) return body;
    return {
      ...body,
      messages: injectContext(body.messages as Parameters<typeof injectContext>[0], contextText),
    };
  },
};
