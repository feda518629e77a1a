import { DEFAULT_RANKING_WEIGHTS } from '../config/ranking-weights';
import {
  RankCandidate,
  rankMemories,
  relevanceOf,
  scoreAndRankMemories,
  scoreMemory,
} from './memory-ranking';

const now = new Date('2026-11-21T12:00:00Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
const memory = (id: string, fields: Partial<RankCandidate> = {}): RankCandidate => ({
  id,
  textRank: 0,
  vectorSimilarity: null,
  importance: 0.5,
  decayFactor: 1,
  createdAt: daysAgo(1),
  lastAccessedAt: null,
  ...fields,
});

describe('rankMemories', () => {
  it('never ranks a memory found next to a match above that match', () => {
    const ranked = rankMemories(
      [
        memory('match', { textRank: 1, importance: 0.1 }),
        memory('neighbour', { textRank: 0.7, importance: 1, anchorId: 'match' }),
        memory('other', { textRank: 0.5 }),
      ],
      now,
    );
    expect(ranked.map((m) => m.id)).toEqual(['match', 'neighbour', 'other']);
  });

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
    expect(relevanceOf([memory('a', { textRank: 0.001 }), memory('b', { textRank: 0.002 })])).toEqual([
      0.5, 1,
    ]);
    expect(relevanceOf([memory('a', { textRank: 10 }), memory('b', { textRank: 20 })])).toEqual([0.5, 1]);
    expect(scoreMemory(memory('b'), 1, now.getTime(), DEFAULT_RANKING_WEIGHTS)).toBeGreaterThan(
      scoreMemory(memory('a'), 0.5, now.getTime(), DEFAULT_RANKING_WEIGHTS),
    );
  });

  it('gives no relevance when nothing matches', () => {
    expect(relevanceOf([memory('a'), memory('b')])).toEqual([0, 0]);
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

  describe('with vector similarities (semantic ranking)', () => {
    it('fuses the two: a memory close in both leads, then one found by its words or its meaning', () => {
      const ranked = rankMemories(
        [
          memory('words only', { textRank: 3, vectorSimilarity: 0.1 }),
          memory('both', { textRank: 5, vectorSimilarity: 0.8 }),
          memory('meaning only', { vectorSimilarity: 0.7 }),
          memory('neither', { vectorSimilarity: 0.1 }),
        ],
        now,
      );
      expect(ranked.map((m) => m.id)).toEqual(['both', 'meaning only', 'words only', 'neither']);
    });

    it('lets a memory that shares no word with the question outrank more important unrelated ones', () => {
      const unrelated = Array.from({ length: 12 }, (_, i) =>
        memory(`unrelated ${i}`, { importance: 0.9, vectorSimilarity: 0.05 + i * 0.001 }),
      );
      const ranked = rankMemories(
        [...unrelated, memory('paraphrase', { importance: 0.2, vectorSimilarity: 0.9 })],
        now,
      );
      expect(ranked[0].id).toBe('paraphrase');
    });

    it('scales similarity between the least and the most similar candidate, and averages it with text', () => {
      const relevance = relevanceOf([
        memory('a', { textRank: 2, vectorSimilarity: 0.2 }),
        memory('b', { textRank: 1, vectorSimilarity: 0.6 }),
        memory('c', { vectorSimilarity: 0.4 }),
        memory('d'),
      ]);
      [0.5, 0.75, 0.25, 0].forEach((expected, index) => expect(relevance[index]).toBeCloseTo(expected));
    });

    it('takes the configured share of relevance from meaning', () => {
      const candidates = [
        memory('words', { textRank: 1, vectorSimilarity: 0.1 }),
        memory('meaning', { vectorSimilarity: 0.9 }),
      ];
      expect(relevanceOf(candidates, 0)).toEqual([1, 0]);
      expect(relevanceOf(candidates, 1)).toEqual([0, 1]);
      const ranked = rankMemories(candidates, now, { ...DEFAULT_RANKING_WEIGHTS, semanticShare: 0.8 });
      expect(ranked[0].id).toBe('meaning');
    });

    it('gives no vector relevance when every similarity is the same', () => {
      expect(
        relevanceOf([
          memory('a', { textRank: 1, vectorSimilarity: 0.3 }),
          memory('b', { vectorSimilarity: 0.3 }),
        ]),
      ).toEqual([0.5, 0]);
    });
  });
});

describe('scores', () => {
  it('halves recency every half-life from the later of creation and last use, and never exceeds 1 for a future time', () => {
    const weights = { ...DEFAULT_RANKING_WEIGHTS, relevance: 0, importance: 0, recency: 1 };
    const at = (days: number, lastUsedDays?: number) =>
      scoreMemory(
        memory('m', {
          createdAt: daysAgo(days),
          lastAccessedAt: lastUsedDays === undefined ? null : daysAgo(lastUsedDays),
        }),
        0,
        now.getTime(),
        weights,
      );
    expect(at(30)).toBeCloseTo(0.5, 12);
    expect(at(60)).toBeCloseTo(0.25, 12);
    expect(at(60, 30)).toBeCloseTo(0.5, 12);
    expect(at(-5)).toBe(1);
  });
});

describe('scoreAndRankMemories with a limit', () => {
  it('gives the first memories of the whole ranking, ties included, for every limit', () => {
    // a fixed pseudo-random sequence: many exact ties of score, of time and of both
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let trial = 0; trial < 200; trial++) {
      const count = 1 + Math.floor(next() * 30);
      const candidates: RankCandidate[] = [];
      for (let i = 0; i < count; i++) {
        const anchor = next() < 0.3 && i > 0 ? candidates[Math.floor(next() * i)].id : null;
        candidates.push(
          memory(`m-${Math.floor(next() * 1000)}-${i}`, {
            textRank: next() < 0.5 ? 0 : Math.floor(next() * 3),
            importance: Math.floor(next() * 3) / 2,
            createdAt: daysAgo(Math.floor(next() * 3)),
            anchorId: next() < 0.1 ? 'not-a-candidate' : anchor,
          }),
        );
      }
      const whole = scoreAndRankMemories(candidates, now).map(({ memory: m, score }) => [m.id, score]);
      for (let limit = 0; limit <= count + 1; limit++) {
        const first = scoreAndRankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, limit);
        expect(first.map(({ memory: m, score }) => [m.id, score])).toEqual(whole.slice(0, limit));
      }
    }
  });
});
