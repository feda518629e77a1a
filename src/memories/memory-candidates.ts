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

/** The strongest matches whose neighbours in time join the candidates. */
export const PROXIMITY_ANCHORS = 3;
/** Memories taken on each side of an anchor. */
export const PROXIMITY_NEIGHBOURS = 2;
/** Neighbours are said within this many minutes of their anchor: the same conversation. */
export const PROXIMITY_WINDOW_MINUTES = 60;
/**
 * A neighbour's share of its anchor's rank; the ranking keeps a neighbour below its anchor. LoCoMo
 * recall: 0.35 -> 0.629, 0.5 -> 0.666, 0.7 -> 0.706.
 */
export const PROXIMITY_SHARE = 0.7;

/** The words of a strongest match (its longest, other than the question's) that may link it to others. */
export const LINK_WORDS = 32;
/** A word links memories when at most this many of the profile's memories (and at least two) have it. */
export const LINK_WORD_MEMORIES = 5;
/**
 * A linked memory's share of its anchor's rank; the ranking keeps it below its anchor. LoCoMo recall
 * (multi-hop): 0.3 and 0.5 alike, 0.8 lets linked memories crowd out the question's own matches.
 */
export const LINK_SHARE = 0.3;
/**
 * Memories are linked in profiles of fewer memories than this (counted up to it): in a larger one,
 * counting how many memories have each of the anchors' words reads most of the profile's index for
 * common words (the context statement at 100,000 memories took three times as long).
 */
export const LINK_PROFILE_LIMIT = 2000;

/** Distinct words of a question that are looked up: names first, then the longest. */
export const MAX_QUESTION_WORDS = 24;

/** Matching memories scored per question (the relevance of a memory beyond these is not computed). */
export const MATCH_POOL = 2000;

/**
 * A profile with fewer memories than this has its words counted and matched in one pass over its
 * memories; a larger one looks each word up in the (profile_id, search_vector) index. One lookup reads
 * the word's entries of every profile, about 0.1 ms each on the throughput bench's 5,000 memories, so
 * for a question of ten words the pass over a small profile costs a fraction of the lookups.
 */
export const WORD_SCAN_LIMIT = 200;

/** BM25 parameters: term-frequency saturation and document-length normalisation (the usual values). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** A word in at least this many of a profile's memories is common: it scores, but does not select. */
export const COMMON_WORD_MEMORIES = 1000;
/**
 * The corpus size in word rarity (IDF) of a profile of LINK_PROFILE_LIMIT memories or more. A smaller
 * profile is its own corpus (its memories are counted up to that limit anyway), so a name in two
 * thirds of its memories weighs next to nothing beside a rare word (against 10,000 memories it would
 * weigh half as much). Counting all of a large profile's memories costs more than the rest of the
 * query (a table scan under a generic plan, or 10,000 heap fetches), so it counts as this large.
 */
export const CORPUS_SIZE = 10_000;

/** The corpus of word rarity for a profile of `memories` memories (counted up to LINK_PROFILE_LIMIT). */
export function corpusSize(memories: number): number {
  return memories < LINK_PROFILE_LIMIT ? memories : CORPUS_SIZE;
}

/**
 * The CTEs that collect a profile's candidate memories for a question, ending in two sets:
 * `question_candidates (id, text_rank, vector_similarity, anchor_id)`, those the question brings, and
 * `standing` (whole rows with their versions), the most important and the most recent whatever the
 * question (with no rank unless the question brings them too); the pure `rankMemories` then orders them.
 *
 * Relevance is BM25 over PostgreSQL full text. A memory's vector holds its words both as English stems
 * and as written ('simple'); each word of the question is looked up both ways and counts once per
 * memory, with the rarity of its written form when the memory has that form, else of its stem. So a rare
 * word that shares its stem with common ones ("organization", "organ") weighs as rare, and names that
 * English drops as stop words ("Will", "US") are found when written as names (`namesIn`). For each word,
 * the number of the profile's memories containing it is counted (through the (profile_id, search_vector)
 * index, up to COMMON_WORD_MEMORIES), so that a word in half the memories, such as a name, weighs little
 * and a rare one much against the profile's size (corpusSize; `ts_rank` has no such weighting). Memories
 * are selected by the question's uncommon words (by all of them when every word is common), at most
 * MATCH_POOL, and scored by all of its words, each counted once per memory (memories are short: counting
 * repeats took 45% longer for 0.004 of LoCoMo recall). The neighbours in time of the strongest matches,
 * and the memories that share a rare word with them (linked), join with a share of their rank. The most
 * important and the most recent memories join the candidates whatever the words. Superseded memories are
 * never candidates. The cost is bounded by the caps, not by the size of the profile or the table.
 */
export function memoryCandidatesSql(
  profileId: string,
  question: string,
  names: string,
  perSource: string,
  semantic?: SemanticParameters,
  wordScanLimit = WORD_SCAN_LIMIT,
): string {
  return `units AS MATERIALIZED (${questionUnitsSql(question, names)}),
    lexemes AS MATERIALIZED (SELECT exact AS lexeme FROM units UNION SELECT stem FROM units WHERE stem IS NOT NULL),
    -- the profile's memories counted up to the word-scan limit: below it, its words are counted in
    -- one pass over its memories; from it on, one index lookup per word (the branches are one-time
    -- filters: only one runs)
    profile_size AS MATERIALIZED (
      SELECT count(*) AS n FROM (
        SELECT 1 FROM memories m WHERE m.profile_id = ${profileId} LIMIT ${wordScanLimit}) AS counted
    ),
    terms AS MATERIALIZED (
      SELECT l.lexeme, count(*) AS df
      FROM memories m, unnest(m.search_vector) AS l
      WHERE (SELECT n FROM profile_size) < ${wordScanLimit} AND m.profile_id = ${profileId}
        AND l.lexeme IN (SELECT lexeme FROM lexemes)
      GROUP BY l.lexeme
      UNION ALL
      SELECT w.lexeme,
             (SELECT count(*) FROM (
                SELECT 1 FROM memories m
                WHERE m.profile_id = ${profileId} AND m.search_vector @@ quote_literal(w.lexeme)::tsquery
                LIMIT ${COMMON_WORD_MEMORIES}) AS found) AS df
      FROM lexemes w
      WHERE (SELECT n FROM profile_size) >= ${wordScanLimit}
    ),
    -- the profile's memories counted up to LINK_PROFILE_LIMIT: below it, the profile is the corpus of
    -- word rarity (corpusSize) and its memories are linked
    link_profile_size AS MATERIALIZED (
      SELECT count(*) AS n FROM (
        SELECT 1 FROM memories m WHERE m.profile_id = ${profileId} LIMIT ${LINK_PROFILE_LIMIT}) AS counted
    ),
    corpus AS MATERIALIZED (
      SELECT CASE WHEN n < ${LINK_PROFILE_LIMIT} THEN n ELSE ${CORPUS_SIZE} END AS n FROM link_profile_size
    ),
    weighted AS MATERIALIZED (
      SELECT t.lexeme, quote_literal(t.lexeme)::tsquery AS word, t.df < ${COMMON_WORD_MEMORIES} AS selective,
             -- a common word's count stopped at the cap: take it as in half the memories, at least the cap
             ln(1 + (c.n - d.df + 0.5) / (d.df + 0.5)) AS idf
      FROM terms t, corpus c,
           LATERAL (SELECT CASE WHEN t.df >= ${COMMON_WORD_MEMORIES} THEN greatest(${COMMON_WORD_MEMORIES}, c.n / 2)
                                ELSE t.df END AS df) AS d
      WHERE t.df > 0
    ),
    question AS (
      SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query FROM weighted
      WHERE selective OR NOT EXISTS (SELECT 1 FROM weighted WHERE selective)
    ),
    -- ts_match_vq is the @@ operator as a function, which no index serves: a small profile's rows are
    -- read through its b-tree and tested, instead of a GIN lookup that reads the word's rows of every
    -- profile
    matched AS MATERIALIZED (
      (SELECT m.id, m.search_vector FROM memories m, question q
       WHERE (SELECT n FROM profile_size) < ${wordScanLimit} AND m.profile_id = ${profileId}
         AND q.query IS NOT NULL AND ts_match_vq(m.search_vector, q.query) AND m.superseded_at IS NULL)
      UNION ALL
      (SELECT m.id, m.search_vector FROM memories m, question q
       WHERE (SELECT n FROM profile_size) >= ${wordScanLimit} AND m.profile_id = ${profileId}
         AND q.query IS NOT NULL AND m.search_vector @@ q.query AND m.superseded_at IS NULL
       LIMIT ${MATCH_POOL})
    ),
    hits AS (
      SELECT x.id, w.lexeme, w.idf, length(x.search_vector) AS dl
      FROM matched x JOIN weighted w ON x.search_vector @@ w.word
    ),
    -- a word counts once per memory: as written when the memory has it so, else by its stem
    word_hits AS (
      SELECT h.id, u.unit, max(h.idf) AS idf, max(h.dl) AS dl
      FROM hits h JOIN units u ON h.lexeme IN (u.exact, u.stem)
      GROUP BY h.id, u.unit
    ),
    lengths AS (SELECT greatest(avg(length(search_vector)), 1) AS avgdl FROM matched),
    -- equal ranks are ordered by id, here and below, so that a cut is the same every time (and the
    -- same as HeldMemoryCandidates makes)
    matching AS (
      SELECT h.id,
             sum(h.idf * ${BM25_K1 + 1} / (1 + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * h.dl / l.avgdl))) AS text_rank
      FROM word_hits h, lengths l
      GROUP BY h.id
      ORDER BY text_rank DESC, h.id
      LIMIT ${perSource}
    ),
    -- memories said just before and after the strongest matches (the same conversation) are likely
    -- about the same thing: they join with a share of their anchor's rank
    anchors AS MATERIALIZED (
      SELECT x.id, x.text_rank, m.created_at, m.search_vector
      FROM (SELECT id, text_rank FROM matching ORDER BY text_rank DESC, id LIMIT ${PROXIMITY_ANCHORS}) AS x
      JOIN memories m ON m.id = x.id
    ),
    -- words of the strongest matches that few other memories have (a name, a place, a rare thing)
    -- link them to the memories that have them: the other half of a two-step answer, which shares no
    -- word with the question; these join with a share of their anchor's rank
    anchor_words AS MATERIALIZED (
      SELECT a.id AS anchor_id, a.text_rank, w.lexeme
      FROM anchors a,
           LATERAL (SELECT l AS lexeme FROM unnest(tsvector_to_array(a.search_vector)) AS l
                    WHERE l NOT IN (SELECT lexeme FROM lexemes)
                    ORDER BY length(l) DESC, l COLLATE "C" LIMIT ${LINK_WORDS}) AS w
      WHERE (SELECT n FROM link_profile_size) < ${LINK_PROFILE_LIMIT}
    ),
    link_words AS MATERIALIZED (
      SELECT w.lexeme, quote_literal(w.lexeme)::tsquery AS word
      FROM (SELECT DISTINCT lexeme FROM anchor_words) AS w
      WHERE (SELECT count(*) FROM (
               SELECT 1 FROM memories m
               WHERE m.profile_id = ${profileId} AND m.search_vector @@ quote_literal(w.lexeme)::tsquery
               LIMIT ${LINK_WORD_MEMORIES + 1}) AS found) BETWEEN 2 AND ${LINK_WORD_MEMORIES}
    ),
    linked AS (
      SELECT m.id, max(a.text_rank) * ${LINK_SHARE} AS text_rank,
             (array_agg(a.anchor_id ORDER BY a.text_rank DESC, a.anchor_id))[1] AS anchor_id
      FROM anchor_words a
      JOIN link_words k ON k.lexeme = a.lexeme
      JOIN memories m ON m.profile_id = ${profileId} AND m.search_vector @@ k.word
        AND m.superseded_at IS NULL AND m.id <> a.anchor_id
      GROUP BY m.id
      ORDER BY text_rank DESC, m.id
      LIMIT ${perSource}
    ),
    neighbours AS (
      SELECT n.id, max(a.text_rank) * ${PROXIMITY_SHARE} AS text_rank,
             (array_agg(a.id ORDER BY a.text_rank DESC, a.id))[1] AS anchor_id
      FROM anchors a,
           LATERAL (
             (SELECT m.id FROM memories m
              WHERE m.profile_id = ${profileId} AND m.superseded_at IS NULL
                AND (m.created_at, m.id) < (a.created_at, a.id)
                AND m.created_at >= a.created_at - interval '${PROXIMITY_WINDOW_MINUTES} minutes'
              ORDER BY m.created_at DESC, m.id DESC LIMIT ${PROXIMITY_NEIGHBOURS})
             UNION ALL
             (SELECT m.id FROM memories m
              WHERE m.profile_id = ${profileId} AND m.superseded_at IS NULL
                AND (m.created_at, m.id) > (a.created_at, a.id)
                AND m.created_at <= a.created_at + interval '${PROXIMITY_WINDOW_MINUTES} minutes'
              ORDER BY m.created_at, m.id LIMIT ${PROXIMITY_NEIGHBOURS})
           ) AS n
      GROUP BY n.id
    ),
    -- the standing candidates (the most important and the most recent), read whole with their row
    -- versions: the context statement sends them only when they changed
    important AS MATERIALIZED (
      SELECT ${STANDING_COLUMNS} FROM memories m WHERE m.profile_id = ${profileId} AND m.superseded_at IS NULL
      ORDER BY m.importance * m.decay_factor DESC, m.created_at DESC, m.id DESC LIMIT ${perSource}
    ),
    recent AS (
      SELECT ${STANDING_COLUMNS} FROM memories m WHERE m.profile_id = ${profileId} AND m.superseded_at IS NULL
      ORDER BY m.created_at DESC, m.id DESC LIMIT ${perSource}
    ),
    ${semantic ? nearestSql(profileId, perSource, semantic) : 'nearest (id, similarity) AS (SELECT NULL::uuid, NULL::float8 WHERE false)'},
    -- the candidates the question brings, with their ranks: the same for a memory found several ways
    question_candidates AS (
      -- anchor_id: the match a memory's rank comes from, when it comes from being next to one
      -- (at equal ranks, a match before a neighbour before a linked memory)
      SELECT id, max(text_rank) AS text_rank, max(similarity) AS vector_similarity,
             CASE WHEN coalesce(max(text_rank) FILTER (WHERE anchor_id IS NULL), 0) < max(text_rank)
                  THEN (array_agg(anchor_id ORDER BY text_rank DESC, source)
                        FILTER (WHERE anchor_id IS NOT NULL))[1] END AS anchor_id
      FROM (
        SELECT id, text_rank, NULL::float8 AS similarity, NULL::uuid AS anchor_id, 0 AS source FROM matching
        UNION ALL SELECT id, text_rank, NULL, anchor_id, 1 FROM neighbours
        UNION ALL SELECT id, text_rank, NULL, anchor_id, 2 FROM linked
        UNION ALL SELECT id, 0, similarity, NULL, 3 FROM nearest
      ) c GROUP BY id
    ),
    -- the candidates whatever the question: the most important and the most recent memories
    standing AS (
      SELECT * FROM important
      UNION ALL SELECT * FROM recent r WHERE NOT EXISTS (SELECT 1 FROM important i WHERE i.id = r.id)    )`;
}

/**
 * Each word of the question as written (`exact`) and as its English stem (`stem`, null for a stop word,
 * which is kept only when written as a name); a word of several parts is not stemmed; `unit` is what
 * the word counts as (its stem, else as written). At most MAX_QUESTION_WORDS of them, names first,
 * then the longest (length goes with rarity): each word costs an index lookup, so a long question must
 * not cost more than a short one.
 */
export function questionUnitsSql(question: string, names: string): string {
  return `SELECT DISTINCT unit, exact, stem FROM (
        SELECT coalesce(s.stem, w.exact) AS unit, w.exact, s.stem
        FROM unnest(tsvector_to_array(to_tsvector('simple'::regconfig, ${question}))) AS w (exact),
             LATERAL (SELECT CASE WHEN count(*) > 1 THEN w.exact ELSE min(l) END AS stem
                      FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, w.exact))) AS l) AS s
        WHERE s.stem IS NOT NULL OR w.exact = ANY(${names})
        ORDER BY (w.exact = ANY(${names})) DESC, length(w.exact) DESC, w.exact
        LIMIT ${MAX_QUESTION_WORDS}
      ) AS bounded`;
}

/** The columns of a standing candidate `m`, with its row version (a new one with every change of the row). */
const STANDING_COLUMNS = `m.id, m.xmin::text AS version, m.content, m.type, m.importance, m.decay_factor,
        m.created_at, m.last_accessed_at`;

/** The question's embedding: placeholders of its text form and model, its size, how it is compared. */
export interface SemanticParameters {
  vector: string;
  model: string;
  /** Part of the statement's text (not a parameter): a vector index of this size can then serve it. */
  dimensions: number;
  /** pgvector's cosine distance, or the cosine in plain SQL over the stored real[] (no extension). */
  engine: 'pgvector' | 'sql';
}

/**
 * A profile with fewer embeddings than this is ranked by an exact scan of them; a larger one walks the
 * vector index (pgvector). Exact is faster for small profiles and never misses; the index answers in a
 * few milliseconds whatever the size.
 */
export const EXACT_NEAREST_LIMIT = 2000;

/** The pgvector type that an HNSW index of this many dimensions is built on, if any (see vector-index). */
export function indexedVectorType(dimensions: number): 'vector' | 'halfvec' | null {
  if (dimensions <= 2000) return 'vector';
  if (dimensions <= 4000) return 'halfvec';
  return null;
}

/**
 * The profile's memories nearest to the question by cosine, with their similarity, among its embeddings
 * by this model and of this size (one of another size cannot be compared, and would make pgvector fail
 * the query). Without pgvector, an exact scan computing the cosine in SQL. With pgvector, an exact scan
 * for a profile of fewer than EXACT_NEAREST_LIMIT embeddings (counted up to the limit), else the HNSW
 * index of this size (`memory_embeddings_hnsw_<size>`, iterative scan so that the profile filter still
 * yields enough rows). The profile filter of the index branch is written so that no b-tree can serve
 * it: the statement is prepared with a generic plan, which cannot know that the branch only runs for
 * large profiles, and would read all of a profile's rows through the (profile_id, model) index.
 */
function nearestSql(profileId: string, perSource: string, semantic: SemanticParameters): string {
  const size = Math.trunc(semantic.dimensions);
  const ofThisModel = `e.model = ${semantic.model} AND cardinality(e.embedding) = ${size}`;
  if (semantic.engine === 'sql') {
    return `nearest AS MATERIALIZED (
      SELECT e.memory_id AS id,
             (SELECT sum(a::float8 * b) / nullif(sqrt(sum(a::float8 * a)) * sqrt(sum(b::float8 * b)), 0)
              FROM unnest(e.embedding, ${semantic.vector}::real[]) AS v (a, b)) AS similarity
      FROM memory_embeddings e
      WHERE e.profile_id = ${profileId} AND ${ofThisModel}
      ORDER BY similarity DESC NULLS LAST, e.memory_id
      LIMIT ${perSource}
    )`;
  }
  const exactDistance = `e.embedding::vector(${size}) <=> ${semantic.vector}::vector(${size})`;
  const indexed = indexedVectorType(size);
  // Ordered by the similarity, which no index serves: ordered by the distance, the planner would walk
  // the HNSW index here too, through every other profile's vectors (0.37 s for a 100-memory profile
  // among 111,000 on PGlite).
  const exactScan = (condition: string) => `SELECT e.memory_id AS id, 1 - (${exactDistance}) AS similarity
        FROM memory_embeddings e
        WHERE ${condition} e.profile_id = ${profileId} AND ${ofThisModel}
        ORDER BY similarity DESC, e.memory_id
        LIMIT ${perSource}`;
  if (!indexed) return `nearest AS MATERIALIZED (${exactScan('')})`;
  const indexDistance = `e.embedding::${indexed}(${size}) <=> ${semantic.vector}::${indexed}(${size})`;
  return `nearest_profile_size AS MATERIALIZED (
      SELECT count(*) AS n FROM (
        SELECT 1 FROM memory_embeddings e WHERE e.profile_id = ${profileId} AND e.model = ${semantic.model}
        LIMIT ${EXACT_NEAREST_LIMIT}) AS counted
    ),
    nearest AS MATERIALIZED (
      (${exactScan(`(SELECT n FROM nearest_profile_size) < ${EXACT_NEAREST_LIMIT} AND`)})
      UNION ALL
      (SELECT e.memory_id AS id, 1 - (${exactDistance}) AS similarity
        FROM memory_embeddings e
        WHERE (SELECT n FROM nearest_profile_size) >= ${EXACT_NEAREST_LIMIT}
          AND e.profile_id::text = (${profileId})::text AND ${ofThisModel}
        ORDER BY ${indexDistance}
        LIMIT ${perSource})
    )`;
}

/** English words too common to say what a text is about, with the fillers of chat ("yeah", "wow", "thanks"). */
export const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below
  between both but by can could did do does doing down during each few for from further get got had has
  have having he her here hers herself him himself his how i if in into is it its itself just me more most
  my myself no nor not now of off on once one only or other our ours ourselves out over own same she
  should so some such than that the their theirs them themselves then there these they this those through
  to too under until up very was we were what when where which while who whom why will with would you
  your yours yourself yourselves yeah oh wow hey thanks thank really like just go going lot much many
  well sure i'm i've i'd i'll it's that's what's you're you've we're they're don't can't didn't isn't`.split(
    /\s+/,
  ),
);

/** Most name-like words of a question looked up as written. */
export const MAX_NAMES = 32;

/** What follows the first part of a negation ("Don" of "Don't"). */
const NEGATION = /^['’][tT](?![\p{L}\p{N}])/u;

/**
 * Words of the question written as names or acronyms, lowercased: capitalised, or in capitals. A
 * capitalised word that opens a sentence is a name unless it is a stop word ("What", "When", "Would")
 * or the first part of a negation ("Don't", "Wouldn't"): "Anna said ..." names Anna. Single letters
 * ("I") are not names. QuestionWords reads names the same way.
 */
export function namesIn(question: string): string[] {
  const names = new Set<string>();
  let previousEnd = 0;
  for (const match of question.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0];
    const opensSentence = previousEnd === 0 || /[.!?\n]/.test(question.slice(previousEnd, match.index));
    previousEnd = match.index + word.length;
    if (word.length < 2 || !/^\p{Lu}/u.test(word)) continue;
    const lower = word.toLowerCase();
    if (
      word === word.toUpperCase() ||
      !opensSentence ||
      !(STOP_WORDS.has(lower) || NEGATION.test(question.slice(previousEnd, previousEnd + 3)))
    ) {
      names.add(lower);
    }
    if (names.size >= MAX_NAMES) break;
  }
  return [...names];
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
  vector_similarity: number | string | null;
  anchor_id?: string | null;
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
    vectorSimilarity:
      row.vector_similarity === null || row.vector_similarity === undefined
        ? null
        : Number(row.vector_similarity),
    anchorId: row.anchor_id ?? null,
  };
}
