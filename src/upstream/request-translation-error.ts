import { isPlainObject, type JsonObject } from '../common/json-values';

/**
 * A request body that cannot be expressed in the protocol it is being translated to. `param` names the
 * offending field (e.g. `messages[2].content[0].type`); the route answers 400 in its own error shape.
 */
export class RequestTranslationError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

// Field checks shared by the request translations; each throws a RequestTranslationError naming the field.

export function requireObject(value: unknown, param: string): JsonObject {
  if (!isPlainObject(value)) throw new RequestTranslationError(`${param} must be an object`, param);
  return value;
}

export function requireString(value: unknown, param: string): string {
  if (typeof value !== 'string') throw new RequestTranslationError(`${param} must be a string`, param);
  return value;
}

export function requireNonEmptyString(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new RequestTranslationError(`${param} must be a non-empty string`, param);
  }
  return value;
}

export function requireArray(value: unknown, param: string): unknown[] {
  if (!Array.isArray(value)) throw new RequestTranslationError(`${param} must be an array`, param);
  return value;
}

/** A number, or undefined when the field is absent or null. */
export function optionalNumber(value: unknown, param: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new RequestTranslationError(`${param} must be a number`, param);
  }
  return value;
}

export function optionalPositiveInteger(value: unknown, param: string): number | undefined {
  const number = optionalNumber(value, param);
  if (number !== undefined && (!Number.isInteger(number) || number < 1)) {
    throw new RequestTranslationError(`${param} must be a positive integer`, param);
  }
  return number;
}

export function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new RequestTranslationError(`${param} must be a boolean`, param);
  return value;
}

export function unsupported(param: string, what: string): RequestTranslationError {
  return new RequestTranslationError(`${what} cannot be translated for this upstream`, param);
}

/** `data:<media type>;base64,<data>`, the form chat completions takes inline images in. */
export function base64DataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}
