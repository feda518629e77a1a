import { HttpStatus } from '@nestjs/common';
import { ApiError, invalidField } from '../common/api-error';
import { isPlainObject, type JsonObject } from '../common/json-values';

/** The service's own options, removed before the request goes upstream. */
export interface ServiceOptions {
  traits?: unknown[];
  skipInjection?: boolean;
  skipExtraction?: boolean;
  debug?: boolean;
}

/** A request body whose envelope is checked: what every protocol has (model, stream, metadata, service). */
export type CheckedRequest = JsonObject & {
  model: string;
  metadata?: Record<string, unknown> | null;
  service?: ServiceOptions | null;
};

/**
 * Checks what every protocol's body has in common: a JSON object with a `model` (a non-empty string of
 * at most 256 characters), a boolean `stream`, an object `metadata` and the service's own options
 * (each optional; null is as good as absent).
 */
export function checkRequestEnvelope(body: unknown): asserts body is CheckedRequest {
  if (!isPlainObject(body))
    throw new ApiError(HttpStatus.BAD_REQUEST, 'invalid_json', 'The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model.trim() === '' || body.model.length > 256) {
    throw invalidField(
      'model',
      'invalid_model',
      'model must be a non-empty string of at most 256 characters.',
    );
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw invalidField('stream', 'invalid_stream', 'stream must be a boolean.');
  }
  if (body.metadata !== undefined && body.metadata !== null && !isPlainObject(body.metadata)) {
    throw invalidField('metadata', 'invalid_metadata', 'metadata must be an object.');
  }
  checkServiceOptions(body.service);
}

export function checkServiceOptions(service: unknown): asserts service is ServiceOptions | undefined | null {
  if (service === undefined || service === null) return;
  if (!isPlainObject(service)) throw invalidField('service', 'invalid_service', 'service must be an object.');
  for (const flag of ['skipInjection', 'skipExtraction', 'debug'] as const) {
    if (service[flag] !== undefined && typeof service[flag] !== 'boolean') {
      throw invalidField(`service.${flag}`, 'invalid_service', `service.${flag} must be a boolean.`);
    }
  }
  if (service.traits !== undefined && !Array.isArray(service.traits)) {
    throw invalidField(
      'service.traits',
      'invalid_service_traits',
      'service.traits must be an array of trait schemas.',
    );
  }
  const known = new Set(['traits', 'skipInjection', 'skipExtraction', 'debug']);
  const unknown = Object.keys(service).find((key) => !known.has(key));
  if (unknown)
    throw invalidField(`service.${unknown}`, 'unknown_field', `Unknown field 'service.${unknown}'.`);
}
