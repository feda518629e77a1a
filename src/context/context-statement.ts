import { NamedStatement, namedStatementText } from '../database/prepared-statements';
import { QuestionVector } from '../embeddings/semantic-search';
import {
  CandidateRow,
  MAX_QUESTION_CHARS,
  memoryCandidatesSql,
  namesIn,
  questionUnitsSql,
  WORD_SCAN_LIMIT,
} from '../memories/memory-candidates';
import type { HeldMemoryRow, QuestionUnit } from '../memories/held-memory-candidates';

/**
 * How the profile is named: by the caller's user id in its application (the proxy), or by its own id
 * (the API, once it resolved the path within the request's application).
 */
export type ProfileKey = { applicationId: string; externalId: string } | { id: string };

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
  /** The profile's memories, superseded ones too, counted up to the word-scan limit. */
  memory_count: number;
}

/**
 * A row of the statement for a profile whose memories are ranked in the process: the profile's
 * memories counted up to the word-scan limit, the fingerprint of everything the ranking reads (null
 * for a profile at or past the limit), that whole part (null when it is the one the caller holds, or
 * the profile is too large), and the question's words.
 */
export interface HeldProfileStatementRow {
  id: string;
  memory_count: number;
  fingerprint: string | null;
  summary: string | null;
  traits: Array<{ key: string; value: unknown }> | null;
  /**
   * The memories whose row version the caller does not hold (all of them when it holds none, or held
   * them from another server start); null when the fingerprint is the held one.
   */
  memories: HeldMemoryRow[] | null;
  /** Every memory's `id=version`, comma-separated ('' for none); null when the fingerprint is the held one. */
  memory_versions: string | null;
  /** The server's start time, which a held copy's row versions hold for; null as `memory_versions`. */
  server_started: string | null;
  units: QuestionUnit[];
}

/** What a caller holds of a small profile, for the held statement: its fingerprint and its memories' versions. */
export interface HeldProfileVersions {
  fingerprint: string;
  /** Each held memory's `id=version`, comma-separated (as `memory_versions` sends them). */
  memoryVersions: string;
  /** The server start time the versions were read under. */
  serverStarted: string;
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
  const text = questionText(question);
  const byId = 'id' in profile;
  const values: unknown[] = [byId ? profile.id : profile.externalId, text, perSource, namesIn(text)];
  if (vector) values.push(vector.literal, vector.model);
  values.push(heldFingerprint);
  const held = `$${values.length}::text`;
  if (!byId) values.push(profile.applicationId);
  const applicationParam = `$${values.length}::uuid`;
  const mode = vector ? `${vector.engine}-${vector.dimensions}` : 'words';
  const name = `chat-context-v18-${byId ? 'id' : 'user'}-${mode}${wordScanLimit === WORD_SCAN_LIMIT ? '' : `-scan${wordScanLimit}`}`;
  const statementText = () => `WITH profile AS (${profileSql(profile, applicationParam)}),
       ${memoryCandidatesSql('(SELECT id FROM profile)', '$2', '$4::text[]', '$3', semantic, wordScanLimit)},
       standing_fingerprint AS MATERIALIZED (
         SELECT ${fingerprintSql(`(SELECT string_agg(r.id || '=' || r.version, ',' ORDER BY r.id) FROM standing r)`)} AS value
         FROM profile p
       )
       SELECT p.id, f.value AS fingerprint,
         CASE WHEN f.value = ${held} THEN NULL ELSE p.summary END AS summary,
         CASE WHEN f.value = ${held} THEN NULL ELSE
           ${TRAITS_JSON} END AS traits,
         CASE WHEN f.value = ${held} THEN NULL ELSE
           (SELECT coalesce(json_agg(${candidateJson('0', 'NULL', 'NULL')}), '[]'::json)
            FROM standing m) END AS standing,
         (SELECT coalesce(json_agg(${candidateJson('c.text_rank', 'c.vector_similarity', 'c.anchor_id')}), '[]'::json)
          FROM question_candidates c
          JOIN memories m ON m.id = c.id AND m.profile_id = p.id AND m.superseded_at IS NULL) AS memories,
         (SELECT n FROM profile_size)::int AS memory_count
       FROM profile p, standing_fingerprint f`;
  return { name, text: namedStatementText(name, statementText), values };
}

/** The question as the statements read it: cut at MAX_QUESTION_CHARS, without NUL characters. */
export function questionText(question: string): string {
  return question.slice(0, MAX_QUESTION_CHARS).replaceAll('\u0000', '');
}

/** The traits of profile `p`, ordered by key, as a JSON array of { key, value }. */
const TRAITS_JSON = `(SELECT coalesce(json_agg(json_build_object('key', t.key, 'value', t.value) ORDER BY t.key), '[]'::json)
            FROM traits t WHERE t.profile_id = p.id)`;

/**
 * The fingerprint of what a caller holds of profile `p` (its row version in `p.version`): an md5 of the
 * server's start time, the profile's id and row version, its traits' keys and row versions, and
 * `memoryVersions` (the ids and row versions of the memories held, as text).
 */
function fingerprintSql(memoryVersions: string): string {
  return `md5(concat_ws('|', pg_postmaster_start_time(), p.id, p.version,
           (SELECT string_agg(t.key || '=' || t.xmin::text, ',' ORDER BY t.key) FROM traits t WHERE t.profile_id = p.id),
           ${memoryVersions}))`;
}

/**
 * The profile row of the context statements: its id, summary and row version. A user id names it within
 * its application, whose id is the parameter `applicationParam`.
 */
function profileSql(profile: ProfileKey, applicationParam: string): string {
  return `SELECT id, summary, xmin::text AS version FROM profiles WHERE ${'id' in profile ? 'id = $1::uuid' : `application_id = ${applicationParam} AND external_id = $1`}`;
}

/**
 * The statement for a profile below the word-scan limit whose memories are held in the process
 * (HeldMemoryCandidates ranks them as memoryCandidatesSql would): the database splits the question
 * into words and confirms by a fingerprint that what the caller holds is what it holds. The
 * fingerprint is an md5 of the server's start time and the ids and row versions (`xmin`) of the
 * profile, its traits and all its memories, so any write to any of them on any replica changes it.
 * When it differs from the held one, the profile and its traits are sent, every memory's id and
 * version, and only the memories whose version the caller does not hold (`held`): a memory updated
 * or touched costs its own row, not the profile's. Versions read under another server start are not
 * trusted (a promoted replica may reuse transaction ids). A profile at or past the limit gets no
 * fingerprint, and the caller uses contextStatement.
 */
export function heldProfileStatement(
  profile: ProfileKey,
  question: string,
  held: HeldProfileVersions | null,
  wordScanLimit = WORD_SCAN_LIMIT,
): NamedStatement {
  const text = questionText(question);
  const byId = 'id' in profile;
  const changed = `f.value IS NOT NULL AND f.value <> $4::text`;
  const memoryVersion = `m.id || '=' || m.xmin::text`;
  const name = `chat-context-v18-held-${byId ? 'id' : 'user'}${wordScanLimit === WORD_SCAN_LIMIT ? '' : `-scan${wordScanLimit}`}`;
  const statementText = () => `WITH profile AS (${profileSql(profile, '$7::uuid')}),
       units AS MATERIALIZED (${questionUnitsSql('$2', '$3::text[]')}),
       profile_size AS MATERIALIZED (
         SELECT count(*)::int AS n FROM (
           SELECT 1 FROM memories m WHERE m.profile_id = (SELECT id FROM profile) LIMIT ${wordScanLimit}) AS counted
       ),
       versions AS MATERIALIZED (
         SELECT CASE WHEN s.n < ${wordScanLimit} THEN
           (SELECT coalesce(string_agg(${memoryVersion}, ',' ORDER BY m.id), '') FROM memories m WHERE m.profile_id = p.id)
         END AS value
         FROM profile p, profile_size s
       ),
       fingerprint AS MATERIALIZED (
         SELECT CASE WHEN v.value IS NOT NULL THEN ${fingerprintSql(`nullif(v.value, '')`)} END AS value
         FROM profile p, versions v
       )
       SELECT p.id, s.n AS memory_count, f.value AS fingerprint,
         CASE WHEN ${changed} THEN p.summary END AS summary,
         CASE WHEN ${changed} THEN
           ${TRAITS_JSON} END AS traits,
         CASE WHEN ${changed} THEN
           (SELECT coalesce(json_agg(json_build_object('id', m.id, 'version', m.xmin::text,
              'content', CASE WHEN m.superseded_at IS NULL THEN m.content END, 'type', m.type,
              'importance', m.importance, 'decay_factor', m.decay_factor, 'created_at', m.created_at,
              'last_accessed_at', m.last_accessed_at,
              'created_us', ((extract(epoch FROM m.created_at) * 1000000)::bigint)::text,
              'superseded', m.superseded_at IS NOT NULL,
              'lexemes', coalesce(tsvector_to_array(m.search_vector), '{}'))), '[]'::json)
            FROM memories m WHERE m.profile_id = p.id
              AND ${memoryVersion} <> ALL (CASE WHEN $6::text = pg_postmaster_start_time()::text
                                               THEN string_to_array($5::text, ',') ELSE '{}'::text[] END)) END AS memories,
         CASE WHEN ${changed} THEN v.value END AS memory_versions,
         CASE WHEN ${changed} THEN pg_postmaster_start_time()::text END AS server_started,
         (SELECT coalesce(json_agg(json_build_object('unit', u.unit, 'exact', u.exact, 'stem', u.stem)), '[]'::json)
          FROM units u) AS units
       FROM profile p, profile_size s, versions v, fingerprint f`;
  return {
    name,
    text: namedStatementText(name, statementText),
    values: [
      byId ? profile.id : profile.externalId,
      text,
      namesIn(text),
      held?.fingerprint ?? '',
      held?.memoryVersions ?? '',
      held?.serverStarted ?? '',
      ...(byId ? [] : [profile.applicationId]),
    ],
  };
}
