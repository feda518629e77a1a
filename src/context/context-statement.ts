import { QuestionVector } from '../embeddings/semantic-search';
import {
  CandidateRow,
  MAX_QUESTION_CHARS,
  memoryCandidatesSql,
  namesIn,
  WORD_SCAN_LIMIT,
} from '../memories/memory-candidates';

/** How the profile is named: by the caller's user id (the proxy), or by its own id (the API). */
export type ProfileKey = { externalId: string } | { id: string };

/**
 * A row of the context statement. The standing part (summary, traits, standing memories) is null when
 * its fingerprint is the one the caller already holds; `memories` are the question's own candidates.
 */
export interface ContextStatementRow {
  id: string;
  fingerprint: string;
  summary: string | null;
  traits: Array<{ key: string; value: unknown }> | null;
  standing: CandidateRow[] | null;
  memories: CandidateRow[];
}

/** A named prepared statement: its name, text and parameter values. */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** A memory `m` as a candidate row (CandidateRow) with these ranks. */
function candidateJson(textRank: string, similarity: string, anchorId: string): string {
  return `json_build_object('id', m.id, 'content', m.content, 'type', m.type, 'importance', m.importance,
            'decay_factor', m.decay_factor, 'created_at', m.created_at, 'last_accessed_at', m.last_accessed_at,
            'text_rank', ${textRank}, 'vector_similarity', ${similarity}, 'anchor_id', ${anchorId})`;
}

/**
 * The statement that loads a profile, its traits and its memory candidates for a question in one round
 * trip. One prepared statement per way of naming the profile and per ranking mode (and per vector size,
 * which is part of the text so that a vector index of that size can serve it).
 *
 * The standing part of the context changes far less often than questions come, so it is sent only
 * when it differs from what the caller holds (`heldFingerprint`, '' for nothing): its fingerprint is a
 * hash of the ids and row versions (`xmin`, new with every change of a row) of the profile, its traits
 * and the standing memories, so any write to any of them, on any replica, changes it, and a held copy
 * with the same fingerprint is exactly what the database holds. The server's start time is part of it:
 * a replica promoted after a failover may hand out again transaction ids the old primary had used.
 * `wordScanLimit` (tests) moves the size below which a profile's words are counted in one pass
 * (WORD_SCAN_LIMIT).
 */
export function contextStatement(
  profile: ProfileKey,
  question: string,
  perSource: number,
  vector: QuestionVector | null,
  heldFingerprint = '',
  wordScanLimit = WORD_SCAN_LIMIT,
): NamedStatement {
  const semantic = vector
    ? { vector: '$5', model: '$6', dimensions: vector.dimensions, engine: vector.engine }
    : undefined;
  const text = question.slice(0, MAX_QUESTION_CHARS).replaceAll('\u0000', '');
  const byId = 'id' in profile;
  const values: unknown[] = [byId ? profile.id : profile.externalId, text, perSource, namesIn(text)];
  if (vector) values.push(vector.literal, vector.model);
  values.push(heldFingerprint);
  const held = `$${values.length}::text`;
  const mode = vector ? `${vector.engine}-${vector.dimensions}` : 'words';
  return {
    name: `chat-context-v14-${byId ? 'id' : 'user'}-${mode}${wordScanLimit === WORD_SCAN_LIMIT ? '' : `-scan${wordScanLimit}`}`,
    text: `WITH profile AS (
         SELECT id, summary, xmin::text AS version FROM profiles WHERE ${byId ? 'id = $1::uuid' : 'external_id = $1'}
       ),
       ${memoryCandidatesSql('(SELECT id FROM profile)', '$2', '$4::text[]', '$3', semantic, wordScanLimit)},
       standing_fingerprint AS MATERIALIZED (
         SELECT md5(concat_ws('|', pg_postmaster_start_time(), p.id, p.version,
           (SELECT string_agg(t.key || '=' || t.xmin::text, ',' ORDER BY t.key) FROM traits t WHERE t.profile_id = p.id),
           (SELECT string_agg(r.id || '=' || r.version, ',' ORDER BY r.id) FROM standing r))) AS value
         FROM profile p
       )
       SELECT p.id, f.value AS fingerprint,
         CASE WHEN f.value = ${held} THEN NULL ELSE p.summary END AS summary,
         CASE WHEN f.value = ${held} THEN NULL ELSE
           (SELECT coalesce(json_agg(json_build_object('key', t.key, 'value', t.value) ORDER BY t.key), '[]'::json)
            FROM traits t WHERE t.profile_id = p.id) END AS traits,
         CASE WHEN f.value = ${held} THEN NULL ELSE
           (SELECT coalesce(json_agg(${candidateJson('0', 'NULL', 'NULL')}), '[]'::json)
            FROM standing m) END AS standing,
         (SELECT coalesce(json_agg(${candidateJson('c.text_rank', 'c.vector_similarity', 'c.anchor_id')}), '[]'::json)
          FROM question_candidates c
          JOIN memories m ON m.id = c.id AND m.profile_id = p.id AND m.superseded_at IS NULL) AS memories
       FROM profile p, standing_fingerprint f`,
    values,
  };
}
