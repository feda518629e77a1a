import { TraitSchema } from '../traits/trait-schema';
import { DroppedItem, ExtractionResult } from './extraction-types';
import { validateExtractionPayload } from './extraction-item-validation';
import { locateJsonObject } from './json-object-locator';

export type ParsedExtraction =
  { ok: true; result: ExtractionResult; dropped: DroppedItem[] } | { ok: false; reason: string };

/**
 * Reads the extraction model's answer. Finds the JSON object even when it is fenced or surrounded by
 * prose, then keeps only the items that fit the schemas. Never throws: a malformed answer gives
 * `ok: false`, a malformed item lands in `dropped` with the reason.
 */
export function parseExtractionOutput(
  answer: string | null | undefined,
  schemas: readonly TraitSchema[],
  messageCount = 1,
): ParsedExtraction {
  if (typeof answer !== 'string') return { ok: false, reason: 'the answer has no text' };
  const located = locateJsonObject(answer, (value) => 'traits' in value || 'memories' in value);
  if (!located.ok) return located;
  const { result, dropped } = validateExtractionPayload(located.value, schemas, messageCount);
  return { ok: true, result, dropped };
}
