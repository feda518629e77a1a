import { Inject, Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { PreparedStatements } from '../database/prepared-statements';
import { ChangeToken, ProfileChangeFeed } from '../database/profile-changes';
import { QuestionVector, SemanticSearch } from '../embeddings/semantic-search';
import { HeldMemoryCandidates, IncompleteHeldCopy } from '../memories/held-memory-candidates';
import {
  CANDIDATES_PER_SOURCE,
  namesIn,
  RetrievedMemory,
  toRetrievedMemory,
  WORD_SCAN_LIMIT,
} from '../memories/memory-candidates';
import { scoreAndRankMemories } from '../memories/memory-ranking';
import { MetricsService } from '../metrics/metrics.service';
import { PROFILE_ERASED, ProfileErasedEvent } from '../profiles/profile-events';
import { ProfilesService } from '../profiles/profiles.service';
import { TraitSchema } from '../traits/trait-schema';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import {
  ContextStatementRow,
  contextStatement,
  heldProfileStatement,
  HeldProfileStatementRow,
  ProfileKey,
  questionText,
} from './context-statement';
import { BuiltContext, buildContextText, ContextTrait } from './context-text';
import { HeldContext, HeldContexts, heldTrustUntil, StandingContext, WholeProfile } from './held-contexts';
import { inCanonicalOrder, QuestionWords } from './question-words';
import type { ProfilePath } from '../profiles/profile-path';

/** Priority of traits that have no schema (custom traits written through the API). */
const UNSCHEMED_TRAIT_PRIORITY = 0;

export const NO_CONTEXT: BuiltContext = { text: '', traitKeys: [], memoryIds: [] };

/** A memory that made it into a context, with the score it was ranked by. */
export interface ScoredMemory extends RetrievedMemory {
  score: number;
}

/** A context and what it was built from: the traits and memories it carries, in its order. */
export interface ExplainedContext {
  context: BuiltContext;
  traits: Array<{ key: string; value: unknown }>;
  memories: ScoredMemory[];
}

/** A profile as the context is built from it: summary, traits, and its memory candidates for a question. */
interface LoadedProfile {
  id: string;
  summary: string;
  traits: Array<{ key: string; value: unknown }>;
  memories: RetrievedMemory[];
}

/** A ranked memory as the API shows it: its fields and its score. */
function withScore({ memory, score }: { memory: RetrievedMemory; score: number }): ScoredMemory {
  return { ...memory, score };
}

/** A context built for a question, with the profile and the ranked candidates it was built from. */
interface BuiltForQuestion {
  row: LoadedProfile;
  ranked: Array<{ memory: RetrievedMemory; score: number }>;
  context: BuiltContext;
}

/**
 * What the proxy injects for one request: summary, injection-enabled traits and the memories that best
 * fit the question. The profile, its traits and its memory candidates come in one round trip, since
 * this is on the path of every chat request. What does not depend on the question is kept between
 * requests and sent again only when it changed (HeldContexts): a small profile whole, its memories
 * then ranked here (HeldMemoryCandidates), a larger one its standing part. A small profile held
 * whole is used without asking the database at all while the database notified no change of it
 * (ProfileChangeFeed), for up to CONTEXT_HELD_TRUST_MS after the database last confirmed it, when the
 * question's words are known here (QuestionWords). The context endpoint and the MCP search tool build
 * the same way, so what they show is what the proxy would send.
 */
@Injectable()
export class ContextService {
  private readonly held: HeldContexts;
  private readonly words = new QuestionWords();

  constructor(
    private readonly statements: PreparedStatements,
    private readonly changes: ProfileChangeFeed,
    private readonly profiles: ProfilesService,
    private readonly semantic: SemanticSearch,
    private readonly schemas: TraitSchemaRegistry,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.held = new HeldContexts(config.context.cacheBytes);
  }

  /**
   * The profile of this user id (created on first use) and, unless skipped, its context for the
   * question. `signal` is asked for only when the question is embedded (the caller's may cost to make).
   */
  async forChat(
    applicationId: string,
    userId: string,
    schemas: TraitSchema[],
    question: string,
    skipInjection: boolean,
    signal?: () => AbortSignal,
  ): Promise<{ profileId: string; context: BuiltContext }> {
    if (!skipInjection) {
      const built = await this.build(
        { applicationId, externalId: userId },
        schemas,
        question,
        this.config.context.maxMemories,
        signal,
      );
      if (built) return { profileId: built.row.id, context: built.context };
    }
    // Skipped, or a new user with nothing to inject yet.
    return {
      profileId: (await this.profiles.getOrCreate(applicationId, userId)).profile.id,
      context: NO_CONTEXT,
    };
  }

  /**
   * What the proxy would inject for this question into a chat of the profile (with the configured trait
   * schemas), and why: the traits and the scored memories it carries. `maxMemories` replaces
   * CONTEXT_MAX_MEMORIES. Reading it does not count as using the memories.
   */
  async forQuestion(pathId: ProfilePath, question: string, maxMemories?: number): Promise<ExplainedContext> {
    const profile = await this.profiles.resolve(pathId);
    const built = await this.build(
      { id: profile.id },
      this.schemas.all(),
      question,
      maxMemories ?? this.config.context.maxMemories,
    );
    return built ? this.explained(built) : { context: NO_CONTEXT, traits: [], memories: [] };
  }

  /**
   * The memories of an existing profile that best fit a query, ranked as the proxy ranks them, with
   * their scores; none for an unknown user. Reading them does not count as using them.
   */
  async searchMemories(
    applicationId: string,
    userId: string,
    query: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<ScoredMemory[]> {
    const vector = await this.semantic.embedQuestion(query, signal);
    const row = await this.loadProfile(
      { applicationId, externalId: userId },
      query,
      Math.max(CANDIDATES_PER_SOURCE, limit),
      vector,
    );
    return row ? this.rank(row, query, limit) : [];
  }

  /**
   * The profile's current memories most related to a text, ranked as the proxy ranks them: what the
   * LLM extractor is shown so that it can supersede or reinforce them. Always as the database has them
   * (a held copy is confirmed), since another replica may have just applied the profile's last batch.
   */
  async relatedMemories(profileId: string, text: string, limit: number): Promise<ScoredMemory[]> {
    const vector = await this.semantic.embedQuestion(text);
    const row = await this.loadProfile(
      { id: profileId },
      text,
      Math.max(CANDIDATES_PER_SOURCE, limit),
      vector,
      false,
    );
    return row ? this.rank(row, text, limit) : [];
  }

  /**
   * The context for the question, with what it was built from. A small profile held and trusted (see
   * withoutAsking) is built at once, without the turns of the event loop that asking costs.
   */
  private build(
    profile: ProfileKey,
    schemas: TraitSchema[],
    question: string,
    maxMemories: number,
    signal?: () => AbortSignal,
  ): BuiltForQuestion | null | Promise<BuiltForQuestion | null> {
    const perSource = maxMemories > 0 ? Math.max(CANDIDATES_PER_SOURCE, maxMemories) : 0;
    const semantic = perSource > 0 && this.semantic.enabled;
    const key = heldKey(profile);
    const trusted = semantic ? null : this.trustedHeld(key, this.held.get(key), question, perSource);
    if (trusted) return this.assembled(trusted, schemas, question, maxMemories);
    return this.buildAsking(profile, schemas, question, maxMemories, perSource, semantic, signal);
  }

  private async buildAsking(
    profile: ProfileKey,
    schemas: TraitSchema[],
    question: string,
    maxMemories: number,
    perSource: number,
    semantic: boolean,
    signal?: () => AbortSignal,
  ): Promise<BuiltForQuestion | null> {
    const vector = semantic ? await this.semantic.embedQuestion(question, signal?.()) : null;
    // `build` tried the held copy already unless semantic ranking is on (and then the question may have
    // found no vector)
    const row = await this.loadProfile(profile, question, perSource, vector, semantic);
    return row && this.assembled(row, schemas, question, maxMemories);
  }

  private assembled(
    row: LoadedProfile,
    schemas: TraitSchema[],
    question: string,
    maxMemories: number,
  ): BuiltForQuestion {
    const ranked = this.scored(row, question, maxMemories);
    const context = buildContextText(
      {
        summary: row.summary,
        traits: injectableTraits(row.traits, schemas),
        memories: ranked.map((entry) => entry.memory),
      },
      { maxMemories, maxChars: this.config.context.maxChars },
    );
    return { row, ranked, context };
  }

  /** What `build` made, with the traits and scored memories that went into its text. */
  private explained({ row, ranked, context }: BuiltForQuestion): ExplainedContext {
    const carried = new Set(context.memoryIds);
    const traitKeys = new Set(context.traitKeys);
    return {
      context,
      traits: row.traits.filter((trait) => traitKeys.has(trait.key)),
      memories: ranked.filter((entry) => carried.has(entry.memory.id)).map(withScore),
    };
  }

  /** The profile's `limit` best candidates for the question, with their scores. */
  private rank(row: LoadedProfile, question: string, limit: number): ScoredMemory[] {
    return this.scored(row, question, limit).map(withScore);
  }

  /** `rank` without copying each memory to add its score, for the chat path that needs only the order. */
  private scored(
    row: LoadedProfile,
    question: string,
    limit: number,
  ): Array<{ memory: RetrievedMemory; score: number }> {
    return scoreAndRankMemories(row.memories, new Date(), this.config.ranking, limit, questionText(question));
  }

  @OnEvent(PROFILE_ERASED)
  onProfileErased(event: ProfileErasedEvent): void {
    this.held.forgetProfile(event.profileId);
  }

  /**
   * The profile, its traits and its memory candidates, in one prepared statement: with words only, a
   * profile below the word-scan limit is held whole and ranked here, the database confirming what is
   * held and splitting the question into words; a larger profile, or a question with a vector, gets
   * its candidates from the database, the standing part from the cache when it is unchanged. Unless
   * `trustHeld` is false, a small profile held and unchanged is used without the statement.
   */
  private async loadProfile(
    profile: ProfileKey,
    question: string,
    perSource: number,
    vector: QuestionVector | null,
    trustHeld = true,
  ): Promise<LoadedProfile | null> {
    const key = heldKey(profile);
    const entry = this.held.get(key);
    const trusted = vector === null && trustHeld ? this.trustedHeld(key, entry, question, perSource) : null;
    if (trusted) return trusted;
    // noted before the read: a profile erased after it is not held again from what the read saw
    const readSince = this.held.moment();
    if (vector === null && entry?.kind !== 'large') {
      const heldWhole = entry?.kind === 'whole' ? entry : undefined;
      const whole = await this.loadWhole(key, heldWhole, profile, question, perSource, readSince);
      if (whole !== 'large') return whole;
    }
    const standingKey = `${key}:${perSource}`;
    const standingEntry = this.held.get(standingKey);
    const held = standingEntry?.kind === 'standing' ? standingEntry : undefined;
    const [row] = await this.statements.query<ContextStatementRow>(
      contextStatement(profile, question, perSource, vector, held?.fingerprint ?? ''),
    );
    if (!row) {
      this.held.delete(standingKey);
      this.held.delete(key);
      return null;
    }
    // a large profile that has shrunk is held whole again from its next question on
    if (row.memory_count < WORD_SCAN_LIMIT && entry?.kind === 'large') this.held.delete(key);
    const standing = row.standing === null && held ? held : standingOf(row);
    return this.served(standingKey, standing, held, merged(row, standing), readSince);
  }

  /** The profile held whole under `key` (`entry`), with its candidates for the question, when withoutAsking may use it. */
  private trustedHeld(
    key: string,
    entry: HeldContext | undefined,
    question: string,
    perSource: number,
  ): LoadedProfile | null {
    if (entry?.kind !== 'whole') return null;
    const known = this.withoutAsking(entry, question, perSource);
    return known && this.served(key, entry, entry, known, this.held.moment(), true);
  }

  /**
   * The question's candidates from a held small profile, without asking the database: null unless no
   * change of the profile was notified since the database last confirmed the copy, its trust from that
   * confirmation (`trustedUntil`) has not run out, and the question's words are known here.
   */
  private withoutAsking(held: WholeProfile, question: string, perSource: number): RetrievedMemory[] | null {
    if (held.confirmed === null || performance.now() >= held.trustedUntil) {
      return null;
    }
    if (!this.changes.unchangedSince(held.profileId, held.confirmed)) return null;
    const text = questionText(question);
    const units = this.words.unitsOf(text);
    return units && held.memories.candidates(units, perSource);
  }

  /** A small profile held whole (`held`, if this process holds it) and ranked here; 'large' when it is not small. */
  private async loadWhole(
    key: string,
    held: WholeProfile | undefined,
    profile: ProfileKey,
    question: string,
    perSource: number,
    readSince: number,
  ): Promise<LoadedProfile | null | 'large'> {
    // noted before the read: a change the read may not see is notified after it
    const confirmed = this.changes.token();
    const trustedUntil = heldTrustUntil(performance.now(), this.config.context.heldTrustMs);
    const [row] = await this.statements.query<HeldProfileStatementRow>(
      heldProfileStatement(
        profile,
        question,
        held
          ? {
              fingerprint: held.fingerprint,
              memoryVersions: held.memories.versionList,
              serverStarted: held.serverStarted,
            }
          : null,
      ),
    );
    if (!row) {
      this.held.delete(key);
      return null;
    }
    const text = questionText(question);
    this.words.learn(text, namesIn(text), row.units);
    let whole: WholeProfile | null | undefined;
    try {
      whole =
        row.fingerprint !== null && row.memories === null
          ? held
          : wholeOf(row, held, confirmed, trustedUntil);
    } catch (error) {
      if (!(error instanceof IncompleteHeldCopy) || held === undefined) throw error;
      this.held.delete(key);
      return this.loadWhole(key, undefined, profile, question, perSource, readSince);
    }
    if (whole === null || whole === undefined) {
      this.held.set(key, { kind: 'large', profileId: row.id }, readSince);
      return 'large';
    }
    if (whole === held) Object.assign(held, { confirmed, trustedUntil });
    return this.served(
      key,
      whole,
      held,
      whole.memories.candidates(inCanonicalOrder(row.units), perSource),
      readSince,
    );
  }

  /**
   * The profile as the context is built from what served: the held copy (counted so, and as `trusted`
   * when the database was not asked), or a new one kept (read after `readSince`).
   */
  private served(
    key: string,
    used: WholeProfile | StandingContext,
    held: WholeProfile | StandingContext | undefined,
    memories: RetrievedMemory[],
    readSince: number,
    trusted = false,
  ): LoadedProfile {
    this.metrics.observeStandingContext(trusted ? 'trusted' : used === held ? 'held' : 'sent');
    if (used !== held) this.held.set(key, used, readSince);
    return { id: used.profileId, summary: used.summary, traits: used.traits, memories };
  }
}

/** What a profile is held under in HeldContexts. */
function heldKey(profile: ProfileKey): string {
  return 'id' in profile ? `id:${profile.id}` : `user:${profile.applicationId}:${profile.externalId}`;
}

/**
 * The profile held whole from this row, read after `confirmed` and trusted until `trustedUntil`, with
 * the memories it did not send taken from `held`; null when it is too large (or its times cannot be
 * held).
 */
function wholeOf(
  row: HeldProfileStatementRow,
  held: WholeProfile | undefined,
  confirmed: ChangeToken | null,
  trustedUntil: number,
): WholeProfile | null {
  const { fingerprint, memories: changed, memory_versions: versions, server_started: serverStarted } = row;
  if (fingerprint === null || changed === null || versions === null || serverStarted === null) return null;
  const memories = held ? held.memories.updated(changed, versions) : HeldMemoryCandidates.from(changed);
  if (memories === null) return null;
  return {
    kind: 'whole',
    ...heldParts(row, fingerprint),
    memories,
    serverStarted,
    confirmed,
    trustedUntil,
  };
}

function standingOf(row: ContextStatementRow): StandingContext {
  const memories = (row.standing ?? []).map(toRetrievedMemory);
  return { kind: 'standing', ...heldParts(row, row.fingerprint), memories };
}

/** What every held context keeps of a statement's row: the profile, the fingerprint, summary and traits. */
function heldParts(
  row: { id: string; summary: string | null; traits: Array<{ key: string; value: unknown }> | null },
  fingerprint: string,
) {
  return { profileId: row.id, fingerprint, summary: row.summary ?? '', traits: row.traits ?? [] };
}

/** The question's candidates, then the standing memories the question did not bring. */
function merged(row: ContextStatementRow, standing: StandingContext): RetrievedMemory[] {
  const brought = row.memories.map(toRetrievedMemory);
  const ids = new Set(brought.map((memory) => memory.id));
  return [...brought, ...standing.memories.filter((memory) => !ids.has(memory.id))];
}

/**
 * A held profile's traits are the same array from one chat to the next, and so are the schemas in force
 * without per-request overrides: the traits made from them are kept with the stored array.
 */
const injectableByStored = new WeakMap<object, { schemas: TraitSchema[]; traits: ContextTrait[] }>();

function injectableTraits(
  stored: Array<{ key: string; value: unknown }>,
  schemas: TraitSchema[],
): ContextTrait[] {
  const known = injectableByStored.get(stored);
  if (known?.schemas === schemas) return known.traits;
  const traits = traitsToInject(stored, schemas);
  injectableByStored.set(stored, { schemas, traits });
  return traits;
}

function traitsToInject(
  stored: Array<{ key: string; value: unknown }>,
  schemas: TraitSchema[],
): ContextTrait[] {
  const schemaByKey = new Map(schemas.map((schema) => [schema.key, schema]));
  const traits: ContextTrait[] = [];
  for (const trait of stored) {
    const schema = schemaByKey.get(trait.key);
    if (schema && !schema.injection.enabled) continue;
    traits.push({
      key: trait.key,
      value: trait.value,
      template: schema?.injection.template ?? `${trait.key}: {{value}}`,
      priority: schema?.injection.priority ?? UNSCHEMED_TRAIT_PRIORITY,
    });
  }
  return traits;
}
