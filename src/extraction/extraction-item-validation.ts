import { TraitSchema } from '../traits/trait-schema';
import { checkTraitValue } from '../traits/trait-value';
import { isPlainObject } from '../common/json-values';
import {
  DroppedItem,
  ExtractedMemory,
  ExtractedTrait,
  ExtractionResult,
  MAX_MEMORY_CONTENT_LENGTH,
  MEMORY_TYPES,
  MemoryType,
  isMemoryType,
} from './extraction-types';
import { normaliseMemoryContent } from '../memories/memory-content';

/**
 * Confidence of a trait whose confidence the model left out. Just at the default schemas' highest
 * threshold (0.7): the model did assert the trait, but without saying how sure it is we do not want
 * it to beat a value that was given with an explicit, higher confidence.
 */
export const DEFAULT_TRAIT_CONFIDENCE = 0.7;
/** Importance of a memory whose importance the model left out: the middle of the scale. */
export const DEFAULT_MEMORY_IMPORTANCE = 0.5;
/** Type of a memory whose type the model left out (an unknown type is dropped, not defaulted). */
export const DEFAULT_MEMORY_TYPE: MemoryType = 'fact';
/** Items past this many in `traits` or `memories` are dropped, so a runaway answer stays bounded. */
export const MAX_EXTRACTED_ITEMS = 100;

const NUMERIC_STRING = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export interface ValidatedExtraction {
  result: ExtractionResult;
  dropped: DroppedItem[];
}

type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Keeps the items of a parsed answer that fit the schemas; every other item is listed in `dropped`.
 * `messageCount` is how many numbered messages the text had: a memory's `messages` are read against it.
 */
export function validateExtractionPayload(
  payload: Record<string, unknown>,
  schemas: readonly TraitSchema[],
  messageCount = 1,
): ValidatedExtraction {
  const dropped: DroppedItem[] = [];
  const schemasByKey = new Map(schemas.map((schema) => [schema.key, schema]));
  const traits = keepBestPerIdentity(
    payload.traits,
    'trait',
    dropped,
    (item) => checkTrait(item, schemasByKey),
    (trait) => ({ identity: trait.key, score: trait.confidence }),
    'duplicate trait key; the value with the highest confidence was kept',
  );
  const memories = keepBestPerIdentity(
    payload.memories,
    'memory',
    dropped,
    (item) => checkMemory(item, messageCount),
    (memory) => ({ identity: normaliseMemoryContent(memory.content), score: memory.importance }),
    'duplicate memory content; the most important one was kept',
  );
  return { result: { traits, memories }, dropped };
}

/**
 * Checks each item of a `traits` or `memories` list and, among valid items with the same identity,
 * keeps the one with the highest score (the first on a tie), in first-seen order.
 */
function keepBestPerIdentity<T>(
  list: unknown,
  kind: DroppedItem['kind'],
  dropped: DroppedItem[],
  check: (item: unknown) => Checked<T>,
  rank: (value: T) => { identity: string; score: number },
  duplicateReason: string,
): T[] {
  if (list === undefined || list === null) return [];
  const field = kind === 'trait' ? 'traits' : 'memories';
  if (!Array.isArray(list)) {
    dropped.push({ kind, reason: `"${field}" is not an array`, item: list });
    return [];
  }
  const best = new Map<string, { value: T; score: number; index: number; item: unknown }>();
  list.forEach((item: unknown, index) => {
    if (index >= MAX_EXTRACTED_ITEMS) {
      dropped.push({ kind, index, reason: `more than ${MAX_EXTRACTED_ITEMS} ${field}`, item });
      return;
    }
    const checked = check(item);
    if (!checked.ok) {
      dropped.push({ kind, index, reason: checked.reason, item });
      return;
    }
    const { identity, score } = rank(checked.value);
    const kept = best.get(identity);
    if (kept !== undefined && score <= kept.score) {
      dropped.push({ kind, index, reason: duplicateReason, item });
      return;
    }
    if (kept !== undefined)
      dropped.push({ kind, index: kept.index, reason: duplicateReason, item: kept.item });
    best.set(identity, { value: checked.value, score, index, item });
  });
  return [...best.values()].map((entry) => entry.value);
}

function checkTrait(item: unknown, schemasByKey: Map<string, TraitSchema>): Checked<ExtractedTrait> {
  if (!isPlainObject(item)) return { ok: false, reason: 'the trait is not an object' };
  if (typeof item.key !== 'string' || item.key.trim() === '') {
    return { ok: false, reason: 'the trait key is missing or not a string' };
  }
  const key = item.key.trim();
  const schema = schemasByKey.get(key);
  if (schema === undefined) return { ok: false, reason: `unknown trait key "${key}"` };
  if (!schema.extraction.enabled) return { ok: false, reason: `extraction is disabled for trait "${key}"` };

  const confidence = readUnitInterval(item.confidence, DEFAULT_TRAIT_CONFIDENCE, 'confidence');
  if (!confidence.ok) return confidence;
  const value = checkTraitValue(schema, coerceTraitValue(schema, item.value));
  if (!value.ok) return { ok: false, reason: `invalid value for trait "${key}": ${value.reason}` };
  return { ok: true, value: { key, value: value.value, confidence: confidence.value } };
}

/**
 * Forgives the slips models commonly make in a value's form, never its meaning: a number or boolean
 * written as a string, an enum value in another letter case, a single string where a list is expected.
 */
function coerceTraitValue(schema: TraitSchema, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  switch (schema.valueType) {
    case 'number':
      return NUMERIC_STRING.test(trimmed) ? Number(trimmed) : value;
    case 'boolean':
      return trimmed.toLowerCase() === 'true' ? true : trimmed.toLowerCase() === 'false' ? false : value;
    case 'enum':
      return schema.enumValues?.find((allowed) => allowed.toLowerCase() === trimmed.toLowerCase()) ?? value;
    case 'array':
      return trimmed === '' ? value : [trimmed];
    default:
      return value;
  }
}

function checkMemory(item: unknown, messageCount: number): Checked<ExtractedMemory> {
  if (!isPlainObject(item)) return { ok: false, reason: 'the memory is not an object' };
  if (typeof item.content !== 'string') return { ok: false, reason: 'the memory content is not a string' };
  const content = item.content.trim();
  if (content === '') return { ok: false, reason: 'the memory content is empty' };
  if (content.length > MAX_MEMORY_CONTENT_LENGTH) {
    return { ok: false, reason: `the memory content is longer than ${MAX_MEMORY_CONTENT_LENGTH} characters` };
  }
  if (content.includes('\u0000')) return { ok: false, reason: 'the memory content contains NUL characters' };

  const type = readMemoryType(item.type);
  if (!type.ok) return type;
  const importance = readUnitInterval(item.importance, DEFAULT_MEMORY_IMPORTANCE, 'importance');
  if (!importance.ok) return importance;
  const memory: ExtractedMemory = { content, type: type.value, importance: importance.value };
  // an unknown action, or one without a usable id, is a plain add
  if ((item.action === 'supersede' || item.action === 'reinforce') && typeof item.memoryId === 'string') {
    memory.revision = { action: item.action, memoryId: item.memoryId.trim() };
  }
  const sources = readMessageNumbers(item.messages, messageCount);
  if (sources !== undefined) memory.sources = sources;
  return { ok: true, value: memory };
}

/**
 * The messages a memory says it comes from, numbered from 1 in the prompt, as positions from 0: the
 * numbers that name one of the `count` messages, each once, in order. Undefined when none does (the
 * memory then cites every message it was read with).
 */
function readMessageNumbers(raw: unknown, count: number): number[] | undefined {
  const list: unknown[] = Array.isArray(raw) ? raw : [raw];
  const positions = new Set<number>();
  for (const entry of list) {
    const number = typeof entry === 'string' && /^\s*\d+\s*$/.test(entry) ? Number(entry) : entry;
    if (typeof number === 'number' && Number.isInteger(number) && number >= 1 && number <= count) {
      positions.add(number - 1);
    }
  }
  return positions.size === 0 ? undefined : [...positions].sort((a, b) => a - b);
}

function readMemoryType(raw: unknown): Checked<MemoryType> {
  if (raw === undefined || raw === null) return { ok: true, value: DEFAULT_MEMORY_TYPE };
  const type = typeof raw === 'string' ? raw.trim().toLowerCase() : raw;
  if (isMemoryType(type)) return { ok: true, value: type };
  return {
    ok: false,
    reason: `unknown memory type ${JSON.stringify(raw)} (expected ${MEMORY_TYPES.join(', ')})`,
  };
}

/** A number in [0, 1], given as a number or a numeric string; `fallback` when absent. */
function readUnitInterval(raw: unknown, fallback: number, name: string): Checked<number> {
  if (raw === undefined || raw === null) return { ok: true, value: fallback };
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  const number =
    typeof raw === 'number' ? raw : text !== undefined && NUMERIC_STRING.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(number)) return { ok: false, reason: `${name} is not a number` };
  if (number < 0 || number > 1) return { ok: false, reason: `${name} ${number} is outside 0..1` };
  return { ok: true, value: number };
}
