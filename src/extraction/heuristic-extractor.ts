import { TaskBudget } from '../common/text-slices';
import { TraitSchema } from '../traits/trait-schema';
import { checkTraitValue } from '../traits/trait-value';
import { ExtractedMemory, ExtractedTrait, ExtractionResult } from './extraction-types';
import { classifyMemory } from './heuristic-memory-rules';
import { MAX_ANALYSED_SENTENCE_LENGTH, analyseSentence, splitIntoSentences } from './heuristic-sentences';
import { TraitMatch, matchTraitRules } from './heuristic-trait-rules';
import { normaliseMemoryContent } from '../memories/memory-content';

/**
 * The rules read at most this many characters of a text (about 5,000 words): past it a message is a
 * paste more than something the user says about themselves, and reading it all would hold the event
 * loop for seconds (an 8 MB message took 2 s), stalling every other request.
 */
export const MAX_HEURISTIC_TEXT_CHARS = 32_000;

/** At most this many memories from one text: a long paste is not a biography. */
export const MAX_HEURISTIC_MEMORIES = 50;
const MAX_LIST_TRAIT_ITEMS = 20;

/**
 * Extracts, without a model, what a text states plainly about its author in the first person. Only
 * traits whose schema is given and extraction-enabled are produced, and only values that pass
 * `checkTraitValue`. Deterministic; reads the first MAX_HEURISTIC_TEXT_CHARS of the text, in time linear
 * in their length. Prefers missing a fact to
 * inventing one, so most texts, and texts in other languages than English, yield little or nothing.
 *
 * When a single-valued trait is stated more than once, the most confident statement wins, the later
 * one on a tie (the user's latest word). List traits (interests, goals) collect every statement.
 */
export function extractHeuristically(text: string, schemas: readonly TraitSchema[]): ExtractionResult {
  const reading = new HeuristicReading(schemas);
  for (const sentence of splitIntoSentences(readableStart(text))) reading.read(sentence);
  return reading.result();
}

/**
 * The same reading as extractHeuristically, sentence by sentence in tasks of TASK_BUDGET_MS at most, so
 * that reading a long text never holds the event loop for long; a short text is read in one task.
 * `enough` ends the reading early when what was found so far is all the caller needs.
 */
export async function extractHeuristicallyInSlices(
  text: string,
  schemas: readonly TraitSchema[],
  enough: (reading: HeuristicReading) => boolean = () => false,
): Promise<ExtractionResult> {
  const reading = new HeuristicReading(schemas);
  const budget = new TaskBudget();
  const sentences = splitIntoSentences(readableStart(text));
  for (let i = 0; i < sentences.length && !enough(reading); i++) {
    if (budget.due()) await budget.pause();
    reading.read(sentences[i]);
  }
  return reading.result();
}

/** The rules' reading of one text, a sentence at a time. */
export class HeuristicReading {
  private readonly extractable: ExtractableSchemas;
  private readonly traitMatches: TraitMatch[] = [];
  private readonly memories = new Map<string, ExtractedMemory>();

  constructor(schemas: readonly TraitSchema[]) {
    this.extractable = extractableSchemas(schemas);
  }

  /** Whether a memory was found: the result cannot be empty. */
  get foundMemory(): boolean {
    return this.memories.size > 0;
  }

  read(raw: string): void {
    if (raw.length > MAX_ANALYSED_SENTENCE_LENGTH) return;
    const sentence = analyseSentence(raw);
    if (this.extractable.keys.size > 0) {
      this.traitMatches.push(...matchTraitRules(sentence, this.extractable.keys));
    }
    const memory = this.memories.size < MAX_HEURISTIC_MEMORIES ? classifyMemory(sentence) : undefined;
    if (memory === undefined) return;
    const identity = normaliseMemoryContent(memory.content);
    if (!this.memories.has(identity)) this.memories.set(identity, memory);
  }

  result(): ExtractionResult {
    const traits =
      this.traitMatches.length === 0
        ? []
        : this.extractable.enabled
            .map((schema) => mergeMatches(schema, this.traitMatches))
            .filter((trait): trait is ExtractedTrait => trait !== undefined);
    return { traits, memories: [...this.memories.values()] };
  }
}

interface ExtractableSchemas {
  enabled: readonly TraitSchema[];
  keys: ReadonlySet<string>;
}

/** Per schema list (the registry's is one array until it changes): every text of a chat reads it. */
const extractableBySchemas = new WeakMap<readonly TraitSchema[], ExtractableSchemas>();

function extractableSchemas(schemas: readonly TraitSchema[]): ExtractableSchemas {
  let found = extractableBySchemas.get(schemas);
  if (found === undefined) {
    const enabled = schemas.filter((schema) => schema.extraction.enabled);
    found = { enabled, keys: new Set(enabled.map((schema) => schema.key)) };
    extractableBySchemas.set(schemas, found);
  }
  return found;
}

function mergeMatches(schema: TraitSchema, matches: TraitMatch[]): ExtractedTrait | undefined {
  const own = matches.filter((match) => match.key === schema.key);
  if (own.length === 0) return undefined;
  const confidence = own.reduce((max, match) => Math.max(max, match.confidence), 0);
  const value =
    schema.valueType === 'array'
      ? own.flatMap((match) => (Array.isArray(match.value) ? (match.value as unknown[]) : [match.value]))
      : own.reduce((best, match) => (match.confidence >= best.confidence ? match : best)).value;
  const checked = checkTraitValue(
    schema,
    Array.isArray(value) ? dedupeCaseInsensitive(value).slice(0, MAX_LIST_TRAIT_ITEMS) : value,
  );
  return checked.ok ? { key: schema.key, value: checked.value, confidence } : undefined;
}

function dedupeCaseInsensitive(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const identity = typeof value === 'string' ? value.toLowerCase() : JSON.stringify(value);
    if (seen.has(identity)) return false;
    seen.add(identity);
    return true;
  });
}

/** The start of a text that the rules read: MAX_HEURISTIC_TEXT_CHARS, never half a surrogate pair. */
export function readableStart(text: string): string {
  if (text.length <= MAX_HEURISTIC_TEXT_CHARS) return text;
  const code = text.charCodeAt(MAX_HEURISTIC_TEXT_CHARS - 1);
  return text.slice(
    0,
    code >= 0xd800 && code <= 0xdbff ? MAX_HEURISTIC_TEXT_CHARS - 1 : MAX_HEURISTIC_TEXT_CHARS,
  );
}
