/**
 * pgvector's iterative index scan (0.8 and later): a filtered search of the HNSW index goes on past its
 * first candidates until the LIMIT is met, so a profile's nearest memories are found in an index of
 * many profiles. Relaxed order: the few results may come slightly out of order; the ranking sorts them.
 * Where pgvector is missing or older, the setting is an unused placeholder.
 */
export const HNSW_ITERATIVE_SCAN = 'relaxed_order';

/** Candidates an HNSW search keeps: at least the LIMIT of the context statement's nearest memories. */
export const HNSW_EF_SEARCH = 100;
