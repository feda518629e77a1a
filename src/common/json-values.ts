export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON.parse that returns undefined instead of throwing, and only accepts objects. */
export function parseJsonObject(text: string): JsonObject | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A NUL character or a lone UTF-16 surrogate: text that PostgreSQL's json, jsonb and text refuse. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a JSON value holds, in a key or a string anywhere, text that cannot be stored. */
export function holdsUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return UNSTORABLE_TEXT.test(value);
  if (Array.isArray(value)) return value.some(holdsUnstorableText);
  if (isPlainObject(value)) {
    return Object.entries(value).some(
      ([key, item]) => UNSTORABLE_TEXT.test(key) || holdsUnstorableText(item),
    );
  }
  return false;
}
