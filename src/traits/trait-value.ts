import { isPlainObject } from '../common/json-values';
import { TraitSchema, TraitValueType } from './trait-schema';

/** Largest trait value, as JSON text. */
export const MAX_TRAIT_VALUE_JSON_LENGTH = 10_000;
const MAX_STRING_LENGTH = 1_000;
const MAX_ARRAY_ITEMS = 100;

export type TraitValueCheck = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Checks a value against a trait schema and returns it normalised (strings trimmed, array items
 * trimmed and de-duplicated). Used by the trait API and by extraction, so both accept the same values.
 */
export function checkTraitValue(
  schema: Pick<TraitSchema, 'valueType' | 'enumValues'>,
  value: unknown,
): TraitValueCheck {
  if (value === null || value === undefined) return { ok: false, reason: 'a value is required' };
  const json = JSON.stringify(value);
  if (json === undefined || json.length > MAX_TRAIT_VALUE_JSON_LENGTH) {
    return {
      ok: false,
      reason: `the value must be at most ${MAX_TRAIT_VALUE_JSON_LENGTH} characters of JSON`,
    };
  }
  if (json.includes('\\u0000')) return { ok: false, reason: 'the value must not contain NUL characters' };
  switch (schema.valueType) {
    case 'string':
      return checkString(value);
    case 'enum': {
      const allowed = schema.enumValues ?? [];
      if (typeof value === 'string' && allowed.includes(value)) return { ok: true, value };
      return { ok: false, reason: `the value must be one of: ${allowed.join(', ')}` };
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, reason: 'the value must be a finite number' };
    case 'boolean':
      return typeof value === 'boolean'
        ? { ok: true, value }
        : { ok: false, reason: 'the value must be a boolean' };
    case 'array':
      return checkArray(value);
    case 'object':
      return isPlainObject(value)
        ? { ok: true, value }
        : { ok: false, reason: 'the value must be a JSON object' };
  }
}

/** The value type of a trait that has no schema, inferred from its value. */
export function inferValueType(value: unknown): TraitValueType {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'string';
  return 'object';
}

function checkString(value: unknown): TraitValueCheck {
  if (typeof value !== 'string') return { ok: false, reason: 'the value must be a string' };
  const trimmed = value.trim();
  if (trimmed.length === 0) return { ok: false, reason: 'the value must not be empty' };
  if (trimmed.length > MAX_STRING_LENGTH) {
    return { ok: false, reason: `the value must be at most ${MAX_STRING_LENGTH} characters` };
  }
  return { ok: true, value: trimmed };
}

function checkArray(value: unknown): TraitValueCheck {
  if (!Array.isArray(value)) return { ok: false, reason: 'the value must be an array' };
  if (value.length > MAX_ARRAY_ITEMS)
    return { ok: false, reason: `the value must have at most ${MAX_ARRAY_ITEMS} items` };
  const items: unknown[] = [];
  const seen = new Set<string>();
  for (const item of value as unknown[]) {
    const normalised = typeof item === 'string' ? item.trim() : item;
    if (normalised === '' || normalised === null)
      return { ok: false, reason: 'array items must not be empty' };
    const identity = typeof normalised === 'string' ? normalised.toLowerCase() : JSON.stringify(normalised);
    if (seen.has(identity)) continue;
    seen.add(identity);
    items.push(normalised);
  }
  return { ok: true, value: items };
}
