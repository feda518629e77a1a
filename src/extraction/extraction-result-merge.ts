import { TraitSchema } from '../traits/trait-schema';
import { checkTraitValue } from '../traits/trait-value';
import { ExtractedMemory, ExtractedTrait, ExtractionResult } from './extraction-types';
import { normaliseMemoryContent } from '../memories/memory-content';
import { unionListItems } from './trait-merge';

/**
 * Combines the results of several pieces of one text (the chunks of a long document, the messages of a
 * conversation), in order. A list trait collects the items of every piece; another trait keeps the most
 * confident value, the later one on a tie (the user's latest word). A memory found twice is kept once,
 * with the larger importance, citing the messages of both.
 */
export function mergeExtractionResults(
  results: ExtractionResult[],
  schemas: readonly TraitSchema[],
): ExtractionResult {
  if (results.length === 1) return results[0];
  const schemasByKey = new Map(schemas.map((schema) => [schema.key, schema]));
  const traits = new Map<string, ExtractedTrait>();
  const memories = new Map<string, ExtractedMemory>();
  for (const result of results) {
    for (const trait of result.traits) {
      const kept = traits.get(trait.key);
      traits.set(trait.key, kept ? mergeTrait(kept, trait, schemasByKey.get(trait.key)) : trait);
    }
    for (const memory of result.memories) {
      const identity = normaliseMemoryContent(memory.content);
      const kept = memories.get(identity);
      if (!kept) memories.set(identity, memory);
      else memories.set(identity, { ...kept, ...mergedMemory(kept, memory) });
    }
  }
  return { traits: [...traits.values()], memories: [...memories.values()] };
}

/** A memory found again: the larger importance, and the messages both came from. */
function mergedMemory(kept: ExtractedMemory, next: ExtractedMemory): Partial<ExtractedMemory> {
  const importance = Math.max(kept.importance, next.importance);
  if (kept.sources === undefined || next.sources === undefined) return { importance, sources: undefined };
  const sources = [...new Set([...kept.sources, ...next.sources])].sort((a, b) => a - b);
  return { importance, sources };
}

function mergeTrait(
  kept: ExtractedTrait,
  next: ExtractedTrait,
  schema: TraitSchema | undefined,
): ExtractedTrait {
  if (schema?.valueType === 'array' && Array.isArray(kept.value) && Array.isArray(next.value)) {
    const checked = checkTraitValue(schema, unionListItems(kept.value, next.value));
    const value = checked.ok ? checked.value : kept.value;
    return { key: kept.key, value, confidence: Math.max(kept.confidence, next.confidence) };
  }
  return next.confidence >= kept.confidence ? next : kept;
}
