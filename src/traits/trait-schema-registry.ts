import { Inject, Injectable } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { AppConfig, ConfigError } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DEFAULT_TRAIT_SCHEMAS } from './default-trait-schemas';
import { TRAIT_KEY_PATTERN, TRAIT_VALUE_TYPES, TraitSchema, TraitValueType } from './trait-schema';
import { isPlainObject } from '../common/json-values';

/** The trait schemas in force: the built-in defaults, or the set in TRAIT_SCHEMAS_FILE. */
@Injectable()
export class TraitSchemaRegistry {
  private readonly schemas: ReadonlyMap<string, TraitSchema>;
  /** One array for every caller (frozen: no caller may change it), so that work derived from it can be kept. */
  private readonly list: TraitSchema[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const list = config.traitSchemasFile
      ? loadTraitSchemasFile(config.traitSchemasFile)
      : DEFAULT_TRAIT_SCHEMAS;
    this.schemas = new Map(list.map((schema) => [schema.key, schema]));
    this.list = Object.freeze([...this.schemas.values()]) as TraitSchema[];
  }

  get(key: string): TraitSchema | undefined {
    return this.schemas.get(key);
  }

  all(): TraitSchema[] {
    return this.list;
  }
}

function loadTraitSchemasFile(path: string): TraitSchema[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError('TRAIT_SCHEMAS_FILE', `cannot be read as JSON (${(error as Error).message})`);
  }
  const list = isPlainObject(parsed) && Array.isArray(parsed.traits) ? parsed.traits : parsed;
  if (!Array.isArray(list)) {
    throw new ConfigError(
      'TRAIT_SCHEMAS_FILE',
      'must hold an array of trait schemas (or { "traits": [...] })',
    );
  }
  const keys = new Set<string>();
  return list.map((item, index) => {
    const problem = describeSchemaProblem(item);
    if (problem) throw new ConfigError('TRAIT_SCHEMAS_FILE', `item ${index}: ${problem}`);
    const schema = item as TraitSchema;
    if (keys.has(schema.key))
      throw new ConfigError('TRAIT_SCHEMAS_FILE', `item ${index}: duplicate key ${schema.key}`);
    keys.add(schema.key);
    return schema;
  });
}

/** What is wrong with a complete trait schema, or null when it is valid. */
export function describeSchemaProblem(item: unknown): string | null {
  if (!isPlainObject(item)) return 'must be an object';
  if (typeof item.key !== 'string' || !TRAIT_KEY_PATTERN.test(item.key)) {
    return 'key must be 1 to 100 letters, digits, _, - or .';
  }
  for (const field of ['label', 'description', 'category'] as const) {
    if (typeof item[field] !== 'string') return `${field} must be a string`;
  }
  if (!TRAIT_VALUE_TYPES.includes(item.valueType as TraitValueType)) {
    return `valueType must be one of ${TRAIT_VALUE_TYPES.join(', ')}`;
  }
  if (item.valueType === 'enum') {
    const values = item.enumValues;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
      return 'enumValues must be a non-empty array of strings for an enum';
    }
  }
  const extraction = item.extraction;
  if (
    !isPlainObject(extraction) ||
    typeof extraction.enabled !== 'boolean' ||
    typeof extraction.promptSnippet !== 'string' ||
    !isUnitNumber(extraction.confidenceThreshold)
  ) {
    return 'extraction must be { enabled: boolean, promptSnippet: string, confidenceThreshold: 0..1 }';
  }
  const injection = item.injection;
  if (
    !isPlainObject(injection) ||
    typeof injection.enabled !== 'boolean' ||
    typeof injection.template !== 'string' ||
    typeof injection.priority !== 'number' ||
    !Number.isFinite(injection.priority)
  ) {
    return 'injection must be { enabled: boolean, template: string, priority: number }';
  }
  return null;
}

function isUnitNumber(value: unknown): boolean {
  return typeof value === 'number' && value >= 0 && value <= 1;
}
