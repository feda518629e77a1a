export interface RankingWeights {
  relevance: number;
  importance: number;
  recency: number;
  /** Days after which recency has halved. */
  recencyHalfLifeDays: number;
  /** With semantic ranking, the share of relevance that comes from meaning (the rest from words). */
  semanticShare: number;
  /** How a candidate's associations with the question's strongest matches add to its relevance. */
  associations: QuestionAssociationWeights;
}

/** How the question's strongest matches and its kind add to a candidate's relevance (memory-associations). */
export interface QuestionAssociationWeights {
  /** The most relevance the strongest matches' distinctive words add (pseudo-relevance feedback). */
  feedback: number;
  /** The strongest matches whose words are followed. */
  feedbackMatches: number;
  /** A word in more than this share of the candidates (and in more than two) is not distinctive. */
  feedbackWordShare: number;
  /** The share of relevance that a memory saying what someone likes gains for a question about preferences. */
  cue: number;
  /** The share of relevance that a memory opening with a name the question asks about gains (its subject). */
  subject: number;
  /** The share of relevance that a memory saying when ("last week") gains for a question about a time. */
  time: number;
  /**
   * The share of relevance that a memory found next to or linked to a match loses for a question about
   * several things of a kind ("what books ..."), whose answers are matches of their own.
   */
  several: number;
}

/**
 * Measured with `BENCH_SUITES=weights npm run bench` (scenarios where the newer statement, the more
 * important fact, the relevant but unimportant or old memory must win): 0.8 / 0.3 / 0.2 and 30 days
 * get every question right; 0.6 / 0.3 / 0.1 loses 3 of 40 partial-match questions to
 * important memories sharing one word. LoCoMo (all importances and ages alike) does not move with them.
 */
export const DEFAULT_RANKING_WEIGHTS: RankingWeights = {
  relevance: 0.8,
  importance: 0.3,
  recency: 0.2,
  recencyHalfLifeDays: 30,
  semanticShare: 0.5,
  associations: {
    feedback: 0.15,
    feedbackMatches: 3,
    feedbackWordShare: 0.1,
    cue: 0.2,
    subject: 0.4,
    time: 0.2,
    several: 0.2,
  },
};
