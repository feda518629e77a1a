import { invalidField } from '../common/api-error';
import { TRAIT_KEY_PATTERN, TRAIT_VALUE_TYPES, TraitSchema, TraitValueType } from './trait-schema';
import { holdsUnstorableText, isPlainObject } from '../common/json-values';

/**
 * A trait schema given with one request (`service.traits` or the X-Service-Traits header). Only `key`
 * is required; the rest overrides the registered schema of that key, or completes a new one.
 */
export interface RequestTraitSchema {
  key: string;
  label?: string;
  description?: string;
  valueType?: TraitValueType;
  enumValues?: string[];
  category?: string;
  extraction?: { enabled?: boolean; promptSnippet?: string; confidenceThreshold?: number };
  injection?: { enabled?: boolean; template?: string; priority?: number };
}

const MAX_REQUEST_SCHEMAS = 100;

/** Reads the header and the body's schemas; the body wins per key. Bad input: 400 invalid_service_traits. */
export function parseRequestTraitSchemas(
  header: string | string[] | undefined,
  body: unknown[] | undefined,
): RequestTraitSchema[] {
  const byKey = new Map<string, RequestTraitSchema>();
  const headerValue = Array.isArray(header) ? header.join(',') : header;
  if (headerValue !== undefined && headerValue.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(headerValue);
    } catch {
      throw invalid('X-Service-Traits', 'X-Service-Traits must be a JSON array of trait schemas.');
    }
    if (!Array.isArray(parsed))
      throw invalid('X-Service-Traits', 'X-Service-Traits must be a JSON array of trait schemas.');
    parsed.forEach((item, index) => addSchema(byKey, item, `X-Service-Traits[${index}]`));
  }
  (body ?? []).forEach((item, index) => addSchema(byKey, item, `service.traits[${index}]`));
  if (byKey.size > MAX_REQUEST_SCHEMAS)
    throw invalid('service.traits', `At most ${MAX_REQUEST_SCHEMAS} trait schemas per request.`);
  return [...byKey.values()];
}

/** The registered schemas with a request's overrides applied (and its new keys added). */
export function applyRequestSchemas(
  registered: TraitSchema[],
  overrides: RequestTraitSchema[],
): TraitSchema[] {
  if (overrides.length === 0) return registered;
  const merged = new Map(registered.map((schema) => [schema.key, schema]));
  for (const override of overrides) {
    const base = merged.get(override.key) ?? newSchema(override.key);
    merged.set(override.key, {
      ...base,
      ...definedFields(override, ['label', 'description', 'valueType', 'enumValues', 'category']),
      extraction: {
        ...base.extraction,
        ...definedFields(override.extraction ?? {}, ['enabled', 'promptSnippet', 'confidenceThreshold']),
      },
      injection: {
        ...base.injection,
        ...definedFields(override.injection ?? {}, ['enabled', 'template', 'priority']),
      },
    });
  }
  return [...merged.values()];
}

function newSchema(key: string): TraitSchema {
  return {
    key,
    label: key,
    description: '',
    valueType: 'string',
    category: 'custom',
    extraction: {
      enabled: true,
      promptSnippet: `The user's ${key.replace(/[_.-]+/g, ' ')}.`,
      confidenceThreshold: 0.5,
    },
    injection: { enabled: true, template: `${key}: {{value}}`, priority: 0 },
  };
}

function addSchema(byKey: Map<string, RequestTraitSchema>, item: unknown, where: string): void {
  if (!isPlainObject(item)) throw invalid(where, `${where} must be an object.`);
  // the schemas are stored with the turn (and used again by a resumed extraction): refused, not lost
  if (holdsUnstorableText(item)) {
    throw invalid(
      where,
      `${where} holds a NUL character or a lone UTF-16 surrogate, which cannot be stored.`,
    );
  }
  if (typeof item.key !== 'string' || !TRAIT_KEY_PATTERN.test(item.key)) {
    throw invalid(`${where}.key`, `${where}.key must be 1 to 100 letters, digits, _, - or .`);
  }
  for (const field of ['label', 'description', 'category'] as const) {
    if (item[field] !== undefined && typeof item[field] !== 'string')
      throw invalid(`${where}.${field}`, `${where}.${field} must be a string.`);
  }
  if (item.valueType !== undefined && !TRAIT_VALUE_TYPES.includes(item.valueType as TraitValueType)) {
    throw invalid(`${where}.valueType`, `${where}.valueType must be one of ${TRAIT_VALUE_TYPES.join(', ')}.`);
  }
  if (
    item.enumValues !== undefined &&
    !(Array.isArray(item.enumValues) && item.enumValues.every((v) => typeof v === 'string'))
  ) {
    throw invalid(`${where}.enumValues`, `${where}.enumValues must be an array of strings.`);
  }
  if (item.valueType === 'enum' && !Array.isArray(item.enumValues)) {
    throw invalid(`${where}.enumValues`, `${where}.enumValues is required for an enum.`);
  }
  checkSection(item.extraction, `${where}.extraction`, {
    enabled: 'boolean',
    promptSnippet: 'string',
    confidenceThreshold: 'unit',
  });
  checkSection(item.injection, `${where}.injection`, {
    enabled: 'boolean',
    template: 'string',
    priority: 'number',
  });
  byKey.set(item.key, item as unknown as RequestTraitSchema);
}

function checkSection(
  section: unknown,
  where: string,
  fields: Record<string, 'boolean' | 'string' | 'number' | 'unit'>,
): void {
  if (section === undefined) return;
  if (!isPlainObject(section)) throw invalid(where, `${where} must be an object.`);
  for (const [field, kind] of Object.entries(fields)) {
    const value = section[field];
    if (value === undefined) continue;
    const ok =
      kind === 'unit'
        ? typeof value === 'number' && value >= 0 && value <= 1
        : kind === 'number'
          ? typeof value === 'number' && Number.isFinite(value)
          : typeof value === kind;
    if (!ok)
      throw invalid(
        `${where}.${field}`,
        `${where}.${field} must be ${kind === 'unit' ? 'a number from 0 to 1' : `a ${kind}`}.`,
      );
  }
}

function definedFields<T extends object, K extends keyof T>(source: T, keys: K[]): Partial<Pick<T, K>> {
  const result: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) result[key] = source[key];
  return result;
}

function invalid(param: string, message: string) {
  return invalidField(param, 'invalid_service_traits', message);
}
