import { QuestionVector } from '../embeddings/semantic-search';
import {
  CandidateRow,
  MAX_QUESTION_CHARS,
  memoryCandidatesSql,
  namesIn,
} from '../memories/memory-candidates';

/** How the profile is named: by the caller's user id (the proxy), or by its own id (the API). */
export type ProfileKey = { externalId: string } | { id: string };

export interface ChatProfileRow {
  id: string;
  summary: string;
  traits: Array<{ key: string; value: unknown }>;
  memories: CandidateRow[];
}

/** A named prepared statement: its name, text and parameter values. */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * The statement that loads a profile, its traits and its memory candidates for a question in one round
 * trip. One prepared statement per way of naming the profile and per ranking mode (and per vector size,
 * which is part of the text so that a vector index of that size can serve it).
 */
export function contextStatement(
  profile: ProfileKey,
  question: string,
  perSource: number,
  vector: QuestionVector | null,
): NamedStatement {
  const semantic = vector
    ? { vector: '$5', model: '$6', dimensions: vector.dimensions, engine: vector.engine }
    : undefined;
  const text = question.slice(0, MAX_QUESTION_CHARS).replaceAll('\u0000', '');
  const byId = 'id' in profile;
  const values: unknown[] = [byId ? profile.id : profile.externalId, text, perSource, namesIn(text)];
  if (vector) values.push(vector.literal, vector.model);
  const mode = vector ? `${vector.engine}-${vector.dimensions}` : 'words';
  return {
    name: `chat-context-v12-${byId ? 'id' : 'user'}-${mode}`,
    text: `WITH profile AS (SELECT id, summary FROM profiles WHERE ${byId ? 'id = $1::uuid' : 'external_id = $1'}),
       ${memoryCandidatesSql('(SELECT id FROM profile)', '$2', '$4::text[]', '$3', semantic)}
       SELECT p.id, p.summary,
         (SELECT coalesce(json_agg(json_build_object('key', t.key, 'value', t.value) ORDER BY t.key), '[]'::json)
          FROM traits t WHERE t.profile_id = p.id) AS traits,
         (SELECT coalesce(json_agg(json_build_object(
                   'id', m.id, 'content', m.content, 'type', m.type, 'importance', m.importance,
                   'decay_factor', m.decay_factor, 'created_at', m.created_at,
                   'last_accessed_at', m.last_accessed_at, 'text_rank', c.text_rank,
                   'vector_similarity', c.vector_similarity, 'anchor_id', c.anchor_id)), '[]'::json)
          FROM candidates c
          JOIN memories m ON m.id = c.id AND m.profile_id = p.id AND m.superseded_at IS NULL) AS memories
       FROM profile p`,
    values,
  };
}
