import { DEFAULT_RANKING_WEIGHTS, type RankingWeights } from '../config/ranking-weights';
import { associate } from './memory-associations';

export interface RankCandidate {
  id: string;
  /** Full-text rank of the memory against the question; 0 when it does not match. */
  textRank: number;
  /**
   * Cosine similarity of the memory's embedding to the question's, when it is among the question's
   * nearest memories; null when it is not, or semantic ranking is off.
   */
  vectorSimilarity: number | null;
  importance: number;
  decayFactor: number;
  createdAt: Date;
  lastAccessedAt: Date | null;
  /** The match this memory was found next to, when its relevance comes from that (proximity). */
  anchorId?: string | null;
  /** Its text: what links it to the question's strongest matches (memory-associations). */
  content?: string;
}

/**
 * Orders candidate memories for a question by relevance, importance (weighed by decay) and recency
 * (halving every `recencyHalfLifeDays` since the memory was created or last used).
 *
 * Relevance is the full-text rank normalised against the best match of this question, so its scale does
 * not depend on the query's length. With semantic ranking the two orders are fused by their scores
 * (relative score fusion): the vector similarity is scaled from the least to the most similar of the
 * question's nearest memories, and relevance mixes the two scaled scores (`semanticShare` of it from
 * meaning, by default half). Positions alone (reciprocal rank fusion) were not used: every memory of a small profile is among the "nearest", and
 * the tenth of twelve unrelated memories would weigh almost as much as the one that answers.
 * Ties keep the newer memory first, then the id, so the order is stable.
 */
export function rankMemories<T extends RankCandidate>(
  candidates: T[],
  now: Date,
  weights = DEFAULT_RANKING_WEIGHTS,
  question = '',
): T[] {
  return scoreAndRankMemories(candidates, now, weights, Number.POSITIVE_INFINITY, question).map(
    (entry) => entry.memory,
  );
}

/**
 * `rankMemories`, with the score each memory was ranked by; the first `limit` of them when a limit is
 * given (picked without sorting the rest: a chat ranks every candidate of the profile to keep ten).
 */
export function scoreAndRankMemories<T extends RankCandidate>(
  candidates: T[],
  now: Date,
  weights = DEFAULT_RANKING_WEIGHTS,
  limit = Number.POSITIVE_INFINITY,
  question = '',
): Array<{ memory: T; score: number }> {
  const scores = scoresOf(candidates, now.getTime(), weights, question);
  // higher score first; ties keep the newer memory first, then the id
  const order = (a: number, b: number) => scores[b] - scores[a] || tieOrder(candidates[a], candidates[b]);
  const ranked =
    limit >= candidates.length
      ? Array.from(candidates, (_, index) => index).sort(order)
      : firstInOrder(scores, limit, (a, b) => tieOrder(candidates[a], candidates[b]));
  return ranked.map((index) => ({ memory: candidates[index], score: scores[index] }));
}

/** Between equal scores: the newer memory first, then the id. */
function tieOrder(a: RankCandidate, b: RankCandidate): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id);
}

/**
 * Each candidate's score, in the order given. A chat scores every candidate of the profile (about as
 * many as it has memories) to keep ten, so this is one loop with the weights and the recency rate
 * worked out once.
 */
function scoresOf(
  candidates: readonly RankCandidate[],
  nowMs: number,
  weights: RankingWeights,
  question: string,
): number[] {
  const scores = relevanceOf(candidates, weights.semanticShare);
  associate(candidates, question, scores, weights.associations);
  const rate = recencyRate(weights);
  let anchored = false;
  for (let index = 0; index < candidates.length; index++) {
    const candidate = candidates[index];
    scores[index] = scoreAt(candidate, scores[index], nowMs, weights, rate);
    if (candidate.anchorId) anchored = true;
  }
  if (anchored) {
    // a memory found next to a match is evidence by association: it never outranks that match (as
    // the match scored before any of this)
    const uncapped = scores.slice();
    for (let index = 0; index < candidates.length; index++) {
      const { anchorId } = candidates[index];
      if (!anchorId) continue;
      // the anchors are the strongest matches, which come first
      const anchor = candidates.findIndex((candidate) => candidate.id === anchorId);
      if (anchor >= 0 && scores[index] >= uncapped[anchor]) scores[index] = uncapped[anchor] - 1e-9;
    }
  }
  return scores;
}

/**
 * Recency halves every `recencyHalfLifeDays`: 2^(-age / half-life), as e^(rate × age in ms), since
 * Math.exp costs a third of Math.pow and every chat computes it for every candidate.
 */
function recencyRate(weights: RankingWeights): number {
  return -Math.LN2 / (86_400_000 * weights.recencyHalfLifeDays);
}

/** The candidate's recency in (0, 1], from when it was created or last used, whichever is later. */
function recencyOf(candidate: RankCandidate, nowMs: number, rate: number): number {
  const created = candidate.createdAt.getTime();
  const accessed = candidate.lastAccessedAt === null ? 0 : candidate.lastAccessedAt.getTime();
  const ageMs = nowMs - (accessed > created ? accessed : created);
  return ageMs > 0 ? Math.exp(rate * ageMs) : 1;
}

/**
 * The indexes of the `count` highest scores, in the order sorting them all would give (higher score
 * first, then `tie`), kept by insertion into a short list.
 */
function firstInOrder(
  scores: readonly number[],
  count: number,
  tie: (a: number, b: number) => number,
): number[] {
  const first: number[] = [];
  if (count <= 0) return first;
  // whether index goes before the one listed at `at`
  const before = (index: number, at: number) => {
    const other = first[at];
    return scores[index] > scores[other] || (scores[index] === scores[other] && tie(index, other) < 0);
  };
  for (let index = 0; index < scores.length; index++) {
    if (first.length === count && !before(index, count - 1)) continue;
    let at = first.length === count ? count - 1 : first.length;
    while (at > 0 && before(index, at - 1)) {
      first[at] = first[at - 1];
      at--;
    }
    first[at] = index;
  }
  return first;
}

/** Each candidate's relevance in [0, 1], in the order given. */
export function relevanceOf(candidates: readonly RankCandidate[], semanticShare = 0.5): number[] {
  // the full-text rank scaled to the best match's
  let best = 0;
  for (const { textRank } of candidates) if (textRank > best) best = textRank;
  const text = (candidate: RankCandidate) => (best > 0 ? candidate.textRank / best : 0);
  if (candidates.every((candidate) => candidate.vectorSimilarity === null)) {
    const relevance = new Array<number>(candidates.length);
    for (let index = 0; index < candidates.length; index++) relevance[index] = text(candidates[index]);
    return relevance;
  }
  const similarities = candidates
    .map((candidate) => candidate.vectorSimilarity)
    .filter((similarity): similarity is number => similarity !== null);
  const least = Math.min(...similarities);
  const spread = Math.max(...similarities) - least;
  return candidates.map((candidate) => {
    const similarity = candidate.vectorSimilarity;
    const vector = similarity === null || spread <= 0 ? 0 : (similarity - least) / spread;
    return (1 - semanticShare) * text(candidate) + semanticShare * vector;
  });
}

/** `nowMs`: now, in milliseconds since the epoch. One candidate's score, as `scoreAndRankMemories` scores it. */
export function scoreMemory(
  candidate: RankCandidate,
  relevance: number,
  nowMs: number,
  weights: RankingWeights,
): number {
  return scoreAt(candidate, relevance, nowMs, weights, recencyRate(weights));
}

/** The score, with the recency rate of `weights` given (`recencyRate`). */
function scoreAt(
  candidate: RankCandidate,
  relevance: number,
  nowMs: number,
  weights: RankingWeights,
  rate: number,
): number {
  return (
    weights.relevance * relevance +
    weights.importance * candidate.importance * candidate.decayFactor +
    weights.recency * recencyOf(candidate, nowMs, rate)
  );
}
