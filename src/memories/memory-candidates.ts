import { MemoryType } from './memory.entity';
import { RankCandidate } from './memory-ranking';

export interface RetrievedMemory extends RankCandidate {
  content: string;
  type: MemoryType;
}

/** Candidates from each source; the ranking then picks among them. */
export const CANDIDATES_PER_SOURCE = 50;

/** Longer questions are cut: the words that matter are rarely beyond this. */
export const MAX_QUESTION_CHARS = 4000;

/**
 * The CTEs (`question`, `matching`, `important`, `recent`, `candidates`) that collect a profile's
 * candidate memories for a question: those sharing any stemmed word with it (full text, 'english'),
 * plus the most important and the most recent. `candidates` has `id` and `text_rank`; the pure
 * `rankMemories` then orders them.
 */
export function memoryCandidatesSql(profileId: string, question: string, perSource: string): string {
  return `question AS (
      SELECT (SELECT string_agg(quote_literal(lexeme), ' | ')
              FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, ${question}))) AS lexeme)::tsquery AS query
    ),
    matching AS (
      SELECT m.id, ts_rank_cd(m.search_vector, q.query) AS text_rank
      FROM memories m, question q
      WHERE m.profile_id = ${profileId} AND q.query IS NOT NULL AND m.search_vector @@ q.query
      ORDER BY text_rank DESC
      LIMIT ${perSource}
    ),
    important AS (
      SELECT m.id FROM memories m WHERE m.profile_id = ${profileId}
      ORDER BY m.importance * m.decay_factor DESC, m.created_at DESC LIMIT ${perSource}
    ),
    recent AS (
      SELECT m.id FROM memories m WHERE m.profile_id = ${profileId} ORDER BY m.created_at DESC LIMIT ${perSource}
    ),
    candidates AS (
      SELECT id, max(text_rank) AS text_rank FROM (
        SELECT id, text_rank FROM matching
        UNION ALL SELECT id, 0 FROM important
        UNION ALL SELECT id, 0 FROM recent
      ) c GROUP BY id
    )`;
}

/** A candidate row as json_agg delivers it (timestamps as strings, ranks maybe as strings). */
export interface CandidateRow {
  id: string;
  content: string;
  type: MemoryType;
  importance: number;
  decay_factor: number;
  created_at: Date | string;
  last_accessed_at: Date | string | null;
  text_rank: number | string;
}

export function toRetrievedMemory(row: CandidateRow): RetrievedMemory {
  return {
    id: row.id,
    content: row.content,
    type: row.type,
    importance: row.importance,
    decayFactor: row.decay_factor,
    createdAt: new Date(row.created_at),
    lastAccessedAt: row.last_accessed_at === null ? null : new Date(row.last_accessed_at),
    textRank: Number(row.text_rank),
  };
}
