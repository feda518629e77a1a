import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, invalidField } from '../../common/api-error';
import { isPlainObject, type JsonObject } from '../../common/json-values';
import { responsesQuestion, responsesTurnUserTexts } from '../../upstream/protocol-translation';
import { checkServiceOptions, ServiceOptions } from '../chat-request';
import { resolveUserId, userIdHeader } from '../user-id';
import { serviceTraits } from './chat-completions';
import { InboundProtocol, InboundTurn } from './inbound-protocol';

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
    const { service, ...forwarded } = request;
    return {
      body: forwarded,
      model: request.model as string,
      stream: request.stream === true,
      userId,
      question: responsesQuestion(request),
      userTexts: responsesTurnUserTexts(request),
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
    const own = typeof body.instructions === 'string' ? body.instructions : '';
    return { ...body, instructions: own ? `${own}\n\n${contextText}` : contextText };
  },
};

function checkResponsesRequest(body: unknown): JsonObject & { service?: ServiceOptions } {
  if (!isPlainObject(body))
    throw new ApiError(400, 'invalid_json', 'The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model.trim() === '' || body.model.length > 256) {
    throw invalidField(
      'model',
      'invalid_model',
      'model must be a non-empty string of at most 256 characters.',
    );
  }
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
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw invalidField('stream', 'invalid_stream', 'stream must be a boolean.');
  }
  if (body.metadata !== undefined && body.metadata !== null && !isPlainObject(body.metadata)) {
    throw invalidField('metadata', 'invalid_metadata', 'metadata must be an object.');
  }
  checkServiceOptions(body.service);
  return body;
}
