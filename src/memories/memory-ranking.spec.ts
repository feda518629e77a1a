import { DEFAULT_RANKING_WEIGHTS, RankCandidate, rankMemories, scoreMemory } from './memory-ranking';

const now = new Date('2026-11-21T12:00:00Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
const memory = (id: string, fields: Partial<RankCandidate> = {}): RankCandidate => ({
  id,
  textRank: 0,
  importance: 0.5,
  decayFactor: 1,
  createdAt: daysAgo(1),
  lastAccessedAt: null,
  ...fields,
});

describe('rankMemories', () => {
  it('puts the memory that answers the question above a more important one that does not', () => {
    const ranked = rankMemories(
      [memory('important', { importance: 1 }), memory('relevant', { textRank: 0.2 })],
      now,
    );
    expect(ranked.map((m) => m.id)).toEqual(['relevant', 'important']);
  });

  it('orders by importance × decay when nothing matches the question', () => {
    const ranked = rankMemories(
      [
        memory('low', { importance: 0.2 }),
        memory('decayed', { importance: 1, decayFactor: 0.3 }),
        memory('high', { importance: 0.9 }),
      ],
      now,
    );
    expect(ranked.map((m) => m.id)).toEqual(['high', 'decayed', 'low']);
  });

  it('prefers the recent memory between two equal ones, and counts a recent use as recent', () => {
    const ranked = rankMemories(
      [
        memory('old', { createdAt: daysAgo(300) }),
        memory('new', { createdAt: daysAgo(2) }),
        memory('used', { createdAt: daysAgo(300), lastAccessedAt: daysAgo(0) }),
      ],
      now,
    );
    expect(ranked.map((m) => m.id)).toEqual(['used', 'new', 'old']);
  });

  it('normalises relevance by the best match, so scores do not depend on the rank scale', () => {
    const small = rankMemories([memory('a', { textRank: 0.001 }), memory('b', { textRank: 0.002 })], now);
    const large = rankMemories([memory('a', { textRank: 10 }), memory('b', { textRank: 20 })], now);
    expect(small.map((m) => m.id)).toEqual(large.map((m) => m.id));
    expect(scoreMemory(memory('b', { textRank: 0.002 }), 0.002, now, DEFAULT_RANKING_WEIGHTS)).toBeCloseTo(
      scoreMemory(memory('b', { textRank: 20 }), 20, now, DEFAULT_RANKING_WEIGHTS),
    );
  });

  it('is stable for exact ties (newer first, then id)', () => {
    const createdAt = daysAgo(3);
    const ranked = rankMemories(
      [memory('b', { createdAt }), memory('a', { createdAt }), memory('c', { createdAt: daysAgo(1) })],
      now,
    );
    expect(ranked.map((m) => m.id)).toEqual(['c', 'a', 'b']);
  });

  it('follows its weights', () => {
    const weights = { ...DEFAULT_RANKING_WEIGHTS, relevance: 0, importance: 1 };
    const ranked = rankMemories(
      [memory('relevant', { textRank: 1, importance: 0.1 }), memory('important', { importance: 0.9 })],
      now,
      weights,
    );
    expect(ranked.map((m) => m.id)).toEqual(['important', 'relevant']);
  });
});
