import type { IncomingHttpHeaders } from 'node:http';
import { headerText } from '../../common/header-text';
import type { JsonObject } from '../../common/json-values';
import { parseRequestTraitSchemas, type RequestTraitSchema } from '../../traits/request-trait-schemas';
import type { CheckedRequest } from '../request-envelope';

/** The client protocols the proxy speaks. */
export type ProtocolName = 'chat' | 'responses' | 'messages';

/** The service's own per-request switches (the `service` body object where a protocol has one). */
export interface TurnOptions {
  skipInjection: boolean;
  skipExtraction: boolean;
  /** Adds `x-service-context-ids` to the answer. */
  debug: boolean;
}

/** What the pipeline needs to know of one client request, whatever its protocol. */
export interface InboundTurn {
  /** The body to forward (the service's own options removed), before the context is injected. */
  body: JsonObject;
  model: string;
  stream: boolean;
  userId: string;
  /** The text memories are ranked by: this turn's user text, with the previous one for a follow-up (`rankingQuery`). */
  question: string;
  /** This turn's user messages (those after the last assistant message): what is recorded and learnt from. */
  userTexts: string[];
  options: TurnOptions;
  traitOverrides: RequestTraitSchema[];
}

/**
 * An inbound protocol: how a client body is read (and refused), where the profile context goes, and
 * how a failure is told in the middle of this protocol's event stream. Everything else (profile,
 * context, relay, recording) is the pipeline's and is the same for every protocol.
 */
export interface InboundProtocol {
  readonly name: ProtocolName;
  parse(body: unknown, headers: IncomingHttpHeaders): InboundTurn;
  /** The body with the context text added at this protocol's injection point (unchanged when empty). */
  inject(body: JsonObject, contextText: string): JsonObject;
}

export const DEFAULT_TURN_OPTIONS: TurnOptions = {
  skipInjection: false,
  skipExtraction: false,
  debug: false,
};

/**
 * The turn of a checked request: the service's own options are taken out of the body that is
 * forwarded; what the protocol read (user id, question, this turn's user texts) is added.
 */
export function inboundTurn(
  request: CheckedRequest,
  headers: IncomingHttpHeaders,
  read: Pick<InboundTurn, 'userId' | 'question' | 'userTexts'>,
): InboundTurn {
  const { service, ...forwarded } = request;
  return {
    body: forwarded,
    model: request.model,
    stream: request.stream === true,
    ...read,
    options: {
      skipInjection: service?.skipInjection === true,
      skipExtraction: service?.skipExtraction === true,
      debug: service?.debug === true,
    },
    traitOverrides: serviceTraits(headers, service?.traits),
  };
}

/** The per-request trait schemas of the X-Service-Traits header and the body (the body wins per key). */
function serviceTraits(headers: IncomingHttpHeaders, fromBody: unknown[] | undefined): RequestTraitSchema[] {
  const header = headerText(headers['x-service-traits'], 'X-Service-Traits', 'invalid_service_traits');
  return parseRequestTraitSchemas(header, fromBody);
}
