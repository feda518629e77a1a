export interface RankingWeights {
  relevance: number;
  importance: number;
  recency: number;
  /** Days after which recency has halved. */
  recencyHalfLifeDays: number;
  /** With semantic ranking, the share of relevance that comes from meaning (the rest from words). */
  semanticShare: number;
}

/**
 * Measured with `BENCH_SUITES=weights npm run bench` (scenarios where the newer statement, the more
 * important fact, the relevant but unimportant or old memory must win): 0.8 / 0.3 / 0.2 and 30 days
 * got every question right; the former 0.6 / 0.3 / 0.1 lost 5 of 40 partial-match questions to
 * important memories sharing one word. LoCoMo (all importances and ages alike) does not move with them.
 */
export const DEFAULT_RANKING_WEIGHTS: RankingWeights = {
  relevance: 0.8,
  importance: 0.3,
  recency: 0.2,
  recencyHalfLifeDays: 30,
  semanticShare: 0.5,
};

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
): T[] {
  return scoreAndRankMemories(candidates, now, weights).map((entry) => entry.memory);
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
): Array<{ memory: T; score: number }> {
  const scores = scoresOf(candidates, now.getTime(), weights);
  // higher score first; ties keep the newer memory first, then the id
  const order = (a: number, b: number) =>
    scores[b] - scores[a] ||
    candidates[b].createdAt.getTime() - candidates[a].createdAt.getTime() ||
    candidates[a].id.localeCompare(candidates[b].id);
  const ranked =
    limit >= candidates.length
      ? Array.from(candidates, (_, index) => index).sort(order)
      : firstInOrder(candidates.length, limit, order);
  return ranked.map((index) => ({ memory: candidates[index], score: scores[index] }));
}

/** Each candidate's score, in the order given. */
function scoresOf(candidates: readonly RankCandidate[], nowMs: number, weights: RankingWeights): number[] {
  const scores = relevanceOf(candidates, weights.semanticShare);
  let anchored = false;
  for (let index = 0; index < candidates.length; index++) {
    const candidate = candidates[index];
    scores[index] = scoreMemory(candidate, scores[index], nowMs, weights);
    if (candidate.anchorId) anchored = true;
  }
  if (anchored) {
    // a memory found next to a match is evidence by association: it never outranks that match
    const anchorScores = new Map<string, number | undefined>();
    for (const { anchorId } of candidates) if (anchorId) anchorScores.set(anchorId, undefined);
    candidates.forEach(({ id }, index) => {
      if (anchorScores.has(id)) anchorScores.set(id, scores[index]);
    });
    candidates.forEach(({ anchorId }, index) => {
      const anchorScore = anchorId ? anchorScores.get(anchorId) : undefined;
      if (anchorScore !== undefined && scores[index] >= anchorScore) scores[index] = anchorScore - 1e-9;
    });
  }
  return scores;
}

/** The first `count` of the indexes below `length` in `order` (a total order), as sorting them all would give. */
function firstInOrder(length: number, count: number, order: (a: number, b: number) => number): number[] {
  const first: number[] = [];
  if (count <= 0) return first;
  for (let index = 0; index < length; index++) {
    if (first.length === count && order(index, first[count - 1]) >= 0) continue;
    let at = first.length === count ? count - 1 : first.length;
    while (at > 0 && order(index, first[at - 1]) < 0) {
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

/** `nowMs`: now, in milliseconds since the epoch. */
export function scoreMemory(
  candidate: RankCandidate,
  relevance: number,
  nowMs: number,
  weights: RankingWeights,
): number {
  const lastUsed = Math.max(candidate.createdAt.getTime(), candidate.lastAccessedAt?.getTime() ?? 0);
  const ageDays = Math.max(0, (nowMs - lastUsed) / 86_400_000);
  const recency = Math.pow(0.5, ageDays / weights.recencyHalfLifeDays);
  return (
    weights.relevance * relevance +
    weights.importance * candidate.importance * candidate.decayFactor +
    weights.recency * recency
  );
}
