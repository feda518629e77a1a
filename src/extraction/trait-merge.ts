import { TraitSchema } from '../traits/trait-schema';
import { checkTraitValue } from '../traits/trait-value';
import type { StoredTrait } from '../traits/traits.repository';
import { ExtractedTrait } from './extraction-types';

/** Most items a merged list trait keeps (the trait API's own limit). */
export const MAX_LIST_TRAIT_ITEMS = 100;

export interface TraitWrite {
  action: 'create' | 'update';
  value: unknown;
  confidence: number;
  sourceMessageIds: string[];
}

/**
 * What extraction may do with one extracted trait, given what is stored:
 * - a manual trait is never changed;
 * - a missing trait is created;
 * - a list trait (valueType `array`) gains the new items, the old ones kept first;
 * - any other value replaces an extracted one only with confidence at or above the schema's threshold;
 *   the same value again only raises the confidence.
 * Returns null when nothing changes.
 */
export function planTraitWrite(
  stored: StoredTrait | undefined,
  extracted: ExtractedTrait,
  schema: TraitSchema,
  sourceMessageIds: string[],
): TraitWrite | null {
  if (stored === undefined) {
    return { action: 'create', value: extracted.value, confidence: extracted.confidence, sourceMessageIds };
  }
  if (stored.source === 'manual') return null;
  const confidence = Math.max(stored.confidence, extracted.confidence);
  const sources = unionIds(stored.sourceMessageIds, sourceMessageIds);

  if (schema.valueType === 'array' && Array.isArray(stored.value) && Array.isArray(extracted.value)) {
    const merged = unionListItems(stored.value, extracted.value);
    const checked = checkTraitValue(schema, merged);
    if (!checked.ok) return null;
    const grew = (checked.value as unknown[]).length > stored.value.length;
    if (!grew && confidence === stored.confidence) return null;
    return { action: 'update', value: checked.value, confidence, sourceMessageIds: sources };
  }
  if (JSON.stringify(stored.value) === JSON.stringify(extracted.value)) {
    if (extracted.confidence <= stored.confidence) return null;
    return { action: 'update', value: stored.value, confidence, sourceMessageIds: sources };
  }
  if (extracted.confidence < schema.extraction.confidenceThreshold) return null;
  return { action: 'update', value: extracted.value, confidence: extracted.confidence, sourceMessageIds };
}

/** The items of `first` then the new ones of `second`; strings compared ignoring case and outer spaces. */
export function unionListItems(first: unknown[], second: unknown[]): unknown[] {
  const seen = new Set<string>();
  const items: unknown[] = [];
  for (const item of [...first, ...second]) {
    const identity =
      typeof item === 'string' ? `s:${item.trim().toLowerCase()}` : `j:${JSON.stringify(item)}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    items.push(item);
  }
  return items.slice(0, MAX_LIST_TRAIT_ITEMS);
}

export function unionIds(first: string[], second: string[]): string[] {
  return [...new Set([...first, ...second])];
}
