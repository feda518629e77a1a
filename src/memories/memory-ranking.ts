export interface RankingWeights {
  relevance: number;
  importance: number;
  recency: number;
  /** Days after which recency has halved. */
  recencyHalfLifeDays: number;
}

export const DEFAULT_RANKING_WEIGHTS: RankingWeights = {
  relevance: 0.6,
  importance: 0.3,
  recency: 0.1,
  recencyHalfLifeDays: 30,
};

export interface RankCandidate {
  id: string;
  /** Full-text rank of the memory against the question; 0 when it does not match. */
  textRank: number;
  importance: number;
  decayFactor: number;
  createdAt: Date;
  lastAccessedAt: Date | null;
}

/**
 * Orders candidate memories for a question. Text relevance is normalised against the best match of
 * this question (so the scale does not depend on the query's length), importance is weighed by decay,
 * and recency halves every `recencyHalfLifeDays` since the memory was created or last used. Ties keep
 * the newer memory first, then the id, so the order is stable.
 */
export function rankMemories<T extends RankCandidate>(
  candidates: T[],
  now: Date,
  weights = DEFAULT_RANKING_WEIGHTS,
): T[] {
  const bestTextRank = Math.max(0, ...candidates.map((c) => c.textRank));
  const scored = candidates.map((candidate) => ({
    candidate,
    score: scoreMemory(candidate, bestTextRank, now, weights),
  }));
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      b.candidate.createdAt.getTime() - a.candidate.createdAt.getTime() ||
      a.candidate.id.localeCompare(b.candidate.id),
  );
  return scored.map((entry) => entry.candidate);
}

export function scoreMemory(
  candidate: RankCandidate,
  bestTextRank: number,
  now: Date,
  weights: RankingWeights,
): number {
  const relevance = bestTextRank > 0 ? candidate.textRank / bestTextRank : 0;
  const lastUsed = Math.max(candidate.createdAt.getTime(), candidate.lastAccessedAt?.getTime() ?? 0);
  const ageDays = Math.max(0, (now.getTime() - lastUsed) / 86_400_000);
  const recency = Math.pow(0.5, ageDays / weights.recencyHalfLifeDays);
  return (
    weights.relevance * relevance +
    weights.importance * candidate.importance * candidate.decayFactor +
    weights.recency * recency
  );
}
