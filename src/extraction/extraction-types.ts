export const MEMORY_TYPES = ['fact', 'preference', 'event', 'context'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** Longest memory content accepted from an extractor, in characters (after trimming). */
export const MAX_MEMORY_CONTENT_LENGTH = 2_000;

export interface ExtractedTrait {
  key: string;
  value: unknown;
  /** 0..1 */
  confidence: number;
}

export interface ExtractedMemory {
  content: string;
  type: MemoryType;
  /** 0..1 */
  importance: number;
  /** The kind of single-valued fact it states: it supersedes the profile's current one of that kind. */
  factKey?: string | null;
  /**
   * What the LLM says it does to a stored memory it was shown: `supersede` it (a newer fact replaces
   * it) or `reinforce` it (the same fact said again: no new memory). Plain `add` when absent.
   */
  revision?: { action: 'supersede' | 'reinforce'; memoryId: string };
  /**
   * The messages it comes from, as positions (from 0) in the texts the extractor read: the memory cites
   * those messages only. Absent when unknown (every message read is cited).
   */
  sources?: number[];
}

/** A memory already stored, shown to the LLM extractor so that it can revise it. */
export interface KnownMemory {
  id: string;
  content: string;
}

export interface ExtractionResult {
  traits: ExtractedTrait[];
  memories: ExtractedMemory[];
}

/** An item of an extractor's answer that was not accepted, and why. */
export interface DroppedItem {
  kind: 'trait' | 'memory';
  /** Position in the answer's `traits` or `memories` array, when the item came from one. */
  index?: number;
  reason: string;
  item: unknown;
}

export function isMemoryType(value: unknown): value is MemoryType {
  return typeof value === 'string' && (MEMORY_TYPES as readonly string[]).includes(value);
}
