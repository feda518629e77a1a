import type { IncomingHttpHeaders } from 'node:http';
import { invalidField } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import { rankingQuery } from '../../memories/ranking-query';
import {
  responsesPreviousUserText,
  responsesQuestion,
  responsesTurnUserTexts,
} from '../../upstream/protocol-translation';
import { CheckedRequest, checkRequestEnvelope } from '../request-envelope';
import { resolveUserId, userIdHeader } from '../user-id';
import { InboundProtocol, InboundTurn, inboundTurn } from './inbound-protocol';

/**
 * `POST /v1/responses` (OpenAI Responses API): the context is added to `instructions`, after the
 * caller's own. The fields the service reads are checked; every other one goes upstream as it is.
 */
export const responsesProtocol: InboundProtocol = {
  name: 'responses',

  parse(body: unknown, headers: IncomingHttpHeaders): InboundTurn {
    const request = checkResponsesRequest(body);
    const metadata = isPlainObject(request.metadata) ? request.metadata : {};
    const userId = resolveUserId([
      userIdHeader(headers),
      ['metadata.profile_id', metadata.profile_id],
      ['user', request.user],
    ]);
    return inboundTurn(request, headers, {
      userId,
      question: rankingQuery(responsesQuestion(request), responsesPreviousUserText(request)),
      userTexts: responsesTurnUserTexts(request),
    });
  },

  inject(body: JsonObject, contextText: string): JsonObject {
    if (!contextText) return body;
    const own = typeof body.instructions === 'string' ? body.instructions : '';
    return { ...body, instructions: own ? `${own}\n\n${contextText}` : contextText };
  },
};

function checkResponsesRequest(body: unknown): CheckedRequest {
  checkRequestEnvelope(body);
  const { input } = body;
  if (
    input !== undefined &&
    typeof input !== 'string' &&
    !(Array.isArray(input) && input.every(isPlainObject))
  ) {
    throw invalidField('input', 'invalid_input', 'input must be a string or an array of input items.');
  }
  if (
    body.instructions !== undefined &&
    body.instructions !== null &&
    typeof body.instructions !== 'string'
  ) {
    throw invalidField('instructions', 'invalid_instructions', 'instructions must be a string.');
  }
  return body;
}
