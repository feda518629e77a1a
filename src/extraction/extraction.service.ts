import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig, effectiveExtractor } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MemoriesService } from '../memories/memories.service';
import { MemoryEntity } from '../memories/memory.entity';
import { TraitSchema } from '../traits/trait-schema';
import { ExtractedMemory, ExtractionResult, KnownMemory } from './extraction-types';
import { mergeExtractionResults } from './extraction-result-merge';
import { extractHeuristicallyInSlices } from './heuristic-extractor';
import { LlmExtractor } from './llm-extractor';
import { splitIntoChunks } from './text-chunks';
import { ExtractedTraitWriter, WrittenTrait } from './extracted-trait-writer';

/** Longest text sent to the LLM in one call; longer texts are cut into pieces extracted separately. */
export const LLM_CHUNK_CHARS = 12_000;
/** Pieces of one long text extracted at the same time. */
const LLM_CHUNK_CONCURRENCY = 3;

export interface ExtractionSwitches {
  extractTraits: boolean;
  extractMemories: boolean;
}

export interface AppliedExtraction {
  traits: WrittenTrait[];
  /** The memories this extraction created (a repeat of a stored memory is not among them). */
  createdMemories: MemoryEntity[];
  /** True when a trait was written or a memory created: the summary may be due. */
  changed: boolean;
}

const NOTHING: ExtractionResult = { traits: [], memories: [] };

/**
 * Turns text into traits and memories, and stores them. Serves ingest (one document) and background
 * extraction (the user's messages of a conversation). The extractor is the LLM or the heuristic rules
 * (EXTRACTOR; `auto` means the LLM when an LLM key is configured).
 */
@Injectable()
export class ExtractionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly llm: LlmExtractor,
    private readonly memories: MemoriesService,
    private readonly traitWriter: ExtractedTraitWriter,
  ) {}

  get mode(): 'llm' | 'heuristic' {
    return effectiveExtractor(this.config);
  }

  /** Extracts from one text; throws ExtractionFailedError when the LLM fails after its retries. */
  async extract(
    text: string,
    schemas: readonly TraitSchema[],
    switches: ExtractionSwitches = { extractTraits: true, extractMemories: true },
    signal: AbortSignal = new AbortController().signal,
  ): Promise<ExtractionResult> {
    if (!switches.extractTraits && !switches.extractMemories) return NOTHING;
    const traitSchemas = switches.extractTraits ? schemas : [];
    const result =
      this.mode === 'heuristic'
        ? await extractHeuristicallyInSlices(text, traitSchemas)
        : await this.extractWithLlm(packMessages([text], LLM_CHUNK_CHARS), traitSchemas, signal);
    return {
      traits: switches.extractTraits ? result.traits : [],
      memories: switches.extractMemories ? result.memories : [],
    };
  }

  /**
   * Whether extracting this one message can store anything. The heuristic rules are cheap, read each
   * message on its own and always find the same in the same text, so a message they find nothing in
   * can be stored as already extracted and never costs the queue a claim; the LLM is always asked.
   * The rules read in slices and stop at the first memory they find.
   */
  async mayLearnFrom(text: string, schemas: readonly TraitSchema[]): Promise<boolean> {
    if (this.mode !== 'heuristic') return true;
    try {
      const found = await extractHeuristicallyInSlices(text, schemas, (reading) => reading.foundMemory);
      return found.traits.length > 0 || found.memories.length > 0;
    } catch {
      return true; // the worker tries it, and records the failure if it fails there too
    }
  }

  /**
   * Extracts from the user's messages of a conversation. The heuristic reads each message on its own
   * (a quote or code fence left open in one cannot hide the next); the LLM reads them together, numbered.
   * Each memory's `sources` are the positions in `userMessages` of the messages it comes from.
   */
  async extractConversation(
    userMessages: string[],
    schemas: readonly TraitSchema[],
    signal: AbortSignal,
    known: readonly KnownMemory[] = [],
  ): Promise<ExtractionResult> {
    if (this.mode === 'heuristic') return await this.extractConversationWithRules(userMessages, schemas);
    if (userMessages.length === 0) return NOTHING;
    return this.extractWithLlm(packMessages(userMessages, LLM_CHUNK_CHARS), schemas, signal, known);
  }

  /** The heuristic rules' reading of a conversation's user messages, each message on its own, in slices. */
  async extractConversationWithRules(
    userMessages: string[],
    schemas: readonly TraitSchema[],
  ): Promise<ExtractionResult> {
    if (userMessages.length === 0) return NOTHING;
    const results: ExtractionResult[] = [];
    for (const [position, text] of userMessages.entries()) {
      results.push(citing(await extractHeuristicallyInSlices(text, schemas), [position]));
    }
    return mergeExtractionResults(results, schemas);
  }

  /**
   * Stores a result for a profile within the caller's transaction. Manual traits are never changed, an
   * extracted trait is replaced only with enough confidence, list traits merge (see `planTraitWrite`);
   * memories are de-duplicated by `MemoriesService.remember`. Applies to one profile are serialised.
   */
  async apply(
    manager: EntityManager,
    profileId: string,
    result: ExtractionResult,
    schemas: readonly TraitSchema[],
    sourceMessageIds: string[],
    source: 'extraction' | 'ingest',
  ): Promise<AppliedExtraction> {
    const traits = await this.traitWriter.write(
      manager,
      profileId,
      result.traits,
      schemas,
      sourceMessageIds,
      source,
    );
    const createdMemories: MemoryEntity[] = [];
    for (const memory of result.memories) {
      const cited = citedIds(memory, sourceMessageIds);
      const change = { source, sourceMessageIds: cited };
      // the same fact said again: the stored memory is reinforced and nothing is added
      if (
        memory.revision?.action === 'reinforce' &&
        (await this.memories.reinforce(
          manager,
          profileId,
          memory.revision.memoryId,
          memory.importance,
          change,
        ))
      ) {
        continue;
      }
      const stored = await this.memories.remember(
        manager,
        profileId,
        { ...memory, sourceMessageIds: cited },
        source,
      );
      if (stored.created) createdMemories.push(stored.memory);
      if (memory.revision?.action === 'supersede') {
        await this.memories.supersede(manager, profileId, memory.revision.memoryId, stored.memory, change);
      }
    }
    return { traits, createdMemories, changed: traits.length > 0 || createdMemories.length > 0 };
  }

  /** To be called once the transaction of `apply` has committed. */
  announce(profileId: string, applied: AppliedExtraction): void {
    this.memories.announceStored(profileId, applied.createdMemories);
  }

  private async extractWithLlm(
    pieces: MessagePiece[],
    schemas: readonly TraitSchema[],
    signal: AbortSignal,
    known: readonly KnownMemory[] = [],
  ): Promise<ExtractionResult> {
    const results: ExtractionResult[] = new Array<ExtractionResult>(pieces.length);
    let next = 0;
    let failed = false;
    const worker = async () => {
      while (next < pieces.length && !failed) {
        const index = next++;
        try {
          const piece = pieces[index];
          const found = await this.llm.extract(piece.texts, schemas, signal, known);
          // positions in the piece become positions in the conversation; a memory that names none
          // cites every message of its piece
          results[index] = {
            traits: found.traits,
            memories: found.memories.map((memory) => ({
              ...memory,
              sources: (memory.sources ?? piece.texts.map((_, i) => i)).map((i) => piece.messages[i]),
            })),
          };
        } catch (error) {
          failed = true; // the whole text fails; do not spend calls on the remaining pieces
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LLM_CHUNK_CONCURRENCY, pieces.length) }, worker));
    return mergeExtractionResults(results, schemas);
  }
}

/** The texts of one LLM call, and the position of the message each one is (a piece of). */
interface MessagePiece {
  texts: string[];
  messages: number[];
}

/**
 * The messages cut into pieces of at most `maxChars` (a long one into several), and consecutive short
 * pieces sent together in one call, up to `maxChars` in all.
 */
function packMessages(messages: readonly string[], maxChars: number): MessagePiece[] {
  const packed: MessagePiece[] = [];
  let size = 0;
  messages.forEach((message, position) => {
    for (const text of splitIntoChunks(message, maxChars)) {
      const last = packed.at(-1);
      if (last !== undefined && size + 2 + text.length <= maxChars) {
        last.texts.push(text);
        last.messages.push(position);
        size += 2 + text.length;
      } else {
        packed.push({ texts: [text], messages: [position] });
        size = text.length;
      }
    }
  });
  return packed;
}

/** A result whose memories all come from the messages at `positions`. */
function citing(result: ExtractionResult, positions: number[]): ExtractionResult {
  return { ...result, memories: result.memories.map((memory) => ({ ...memory, sources: positions })) };
}

/** The ids of the messages a memory cites: those of its `sources`, else all of `messageIds`. */
function citedIds(memory: ExtractedMemory, messageIds: string[]): string[] {
  if (memory.sources === undefined) return messageIds;
  return memory.sources.flatMap((position) => (position < messageIds.length ? [messageIds[position]] : []));
}
