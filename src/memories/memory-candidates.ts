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

/** Matching memories scored per question (the relevance of a memory beyond these is not computed). */
export const MATCH_POOL = 2000;

/** BM25 parameters: term-frequency saturation and document-length normalisation (the usual values). */
const BM25_K1 = 1.2;
const BM25_B = 0.75;

/**
 * The CTEs that collect a profile's candidate memories for a question, ending in `candidates (id,
 * text_rank)`; the pure `rankMemories` then orders them.
 *
 * Relevance is BM25 over PostgreSQL full text ('english' stemming): every memory sharing a word with
 * the question is matched through the GIN index (up to MATCH_POOL of them), and each shared word counts
 * by its rarity in the profile, so that a name or word found in half the memories weighs little and a
 * rare one much (`ts_rank` has no such weighting). Document frequencies come from the matched set,
 * which is exact while a profile has fewer than MATCH_POOL matches. The most important and the most
 * recent memories join the candidates whatever the words.
 */
export function memoryCandidatesSql(profileId: string, question: string, perSource: string): string {
  return `question AS (
      SELECT (SELECT string_agg(quote_literal(lexeme), ' | ')
              FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, ${question}))) AS lexeme)::tsquery AS query
    ),
    terms AS (
      SELECT DISTINCT lexeme FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, ${question}))) AS lexeme
    ),
    matched AS (
      SELECT m.id, m.search_vector FROM memories m, question q
      WHERE m.profile_id = ${profileId} AND q.query IS NOT NULL AND m.search_vector @@ q.query
      LIMIT ${MATCH_POOL}
    ),
    hits AS (
      SELECT x.id, v.lexeme, coalesce(array_length(v.positions, 1), 1) AS tf, length(x.search_vector) AS dl
      FROM matched x, unnest(x.search_vector) AS v
      WHERE v.lexeme IN (SELECT lexeme FROM terms)
    ),
    frequencies AS (SELECT lexeme, count(*) AS df FROM hits GROUP BY lexeme),
    corpus AS (
      SELECT (SELECT count(*) FROM memories WHERE profile_id = ${profileId}) AS n,
             (SELECT greatest(avg(length(search_vector)), 1) FROM matched) AS avgdl
    ),
    matching AS (
      SELECT h.id,
             sum(ln(1 + (c.n - f.df + 0.5) / (f.df + 0.5)) * h.tf * ${BM25_K1 + 1}
                 / (h.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * h.dl / c.avgdl))) AS text_rank
      FROM hits h JOIN frequencies f USING (lexeme), corpus c
      GROUP BY h.id
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
