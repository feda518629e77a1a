import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { PreparedStatements } from '../database/prepared-statements';
import { QuestionVector, SemanticSearch } from '../embeddings/semantic-search';
import { rankMemories, scoreAndRankMemories } from '../memories/memory-ranking';
import {
  CANDIDATES_PER_SOURCE,
  CandidateRow,
  MAX_QUESTION_CHARS,
  memoryCandidatesSql,
  namesIn,
  RetrievedMemory,
  toRetrievedMemory,
} from '../memories/memory-candidates';
import { ProfilesService } from '../profiles/profiles.service';
import { TraitSchema } from '../traits/trait-schema';
import { BuiltContext, buildContextText, ContextTrait } from './context-text';

/** Priority of traits that have no schema (custom traits written through the API). */
const UNSCHEMED_TRAIT_PRIORITY = 0;

export const NO_CONTEXT: BuiltContext = { text: '', traitKeys: [], memoryIds: [] };

interface ChatProfileRow {
  id: string;
  summary: string;
  traits: Array<{ key: string; value: unknown }>;
  memories: CandidateRow[];
}

/**
 * What the proxy injects for one request: summary, injection-enabled traits and the memories that best
 * fit the question. The profile, its traits and its memory candidates come in one round trip, since
 * this is on the path of every chat request.
 */
@Injectable()
export class ContextService {
  constructor(
    private readonly statements: PreparedStatements,
    private readonly profiles: ProfilesService,
    private readonly semantic: SemanticSearch,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The profile of this user id (created on first use) and, unless skipped, its context for the question. */
  async forChat(
    userId: string,
    schemas: TraitSchema[],
    question: string,
    skipInjection: boolean,
    signal?: AbortSignal,
  ): Promise<{ profileId: string; context: BuiltContext }> {
    if (skipInjection)
      return { profileId: (await this.profiles.getOrCreate(userId)).profile.id, context: NO_CONTEXT };
    const perSource = this.config.context.maxMemories > 0 ? CANDIDATES_PER_SOURCE : 0;
    const vector = perSource > 0 ? await this.semantic.embedQuestion(question, signal) : null;
    const rows = await this.loadProfile(userId, question, perSource, vector);
    const row = rows[0];
    // A new user: nothing to inject yet.
    if (!row) return { profileId: (await this.profiles.getOrCreate(userId)).profile.id, context: NO_CONTEXT };

    const memories = rankMemories(row.memories.map(toRetrievedMemory), new Date(), this.config.ranking).slice(
      0,
      this.config.context.maxMemories,
    );
    const context = buildContextText(
      { summary: row.summary, traits: injectableTraits(row.traits, schemas), memories },
      this.config.context,
    );
    return { profileId: row.id, context };
  }

  /**
   * The memories of an existing profile that best fit a query, ranked as the proxy ranks them, with
   * their scores; none for an unknown user. Reading them does not count as using them.
   */
  async searchMemories(
    userId: string,
    query: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<Array<{ memory: RetrievedMemory; score: number }>> {
    const vector = await this.semantic.embedQuestion(query, signal);
    const [row] = await this.loadProfile(userId, query, Math.max(CANDIDATES_PER_SOURCE, limit), vector);
    if (!row) return [];
    const candidates = row.memories.map(toRetrievedMemory);
    return scoreAndRankMemories(candidates, new Date(), this.config.ranking).slice(0, limit);
  }

  /** The profile, its traits and its memory candidates, in one prepared statement per ranking mode. */
  private loadProfile(
    userId: string,
    question: string,
    perSource: number,
    vector: QuestionVector | null,
  ): Promise<ChatProfileRow[]> {
    const semantic = vector ? { vector: '$5', model: '$6', dimensions: '$7' } : undefined;
    const text = question.slice(0, MAX_QUESTION_CHARS).replaceAll('\u0000', '');
    const values: unknown[] = [userId, text, perSource, namesIn(text)];
    if (vector) values.push(vector.literal, vector.model, vector.dimensions);
    return this.statements.query<ChatProfileRow>(
      vector ? 'chat-context-semantic-v2' : 'chat-context-v6',
      `WITH profile AS (SELECT id, summary FROM profiles WHERE external_id = $1),
       ${memoryCandidatesSql('(SELECT id FROM profile)', '$2', '$4::text[]', '$3', semantic)}
       SELECT p.id, p.summary,
         (SELECT coalesce(json_agg(json_build_object('key', t.key, 'value', t.value) ORDER BY t.key), '[]'::json)
          FROM traits t WHERE t.profile_id = p.id) AS traits,
         (SELECT coalesce(json_agg(json_build_object(
                   'id', m.id, 'content', m.content, 'type', m.type, 'importance', m.importance,
                   'decay_factor', m.decay_factor, 'created_at', m.created_at,
                   'last_accessed_at', m.last_accessed_at, 'text_rank', c.text_rank,
                   'vector_similarity', c.vector_similarity)), '[]'::json)
          FROM candidates c JOIN memories m ON m.id = c.id AND m.profile_id = p.id) AS memories
       FROM profile p`,
      values,
    );
  }
}

function injectableTraits(
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
