import { DEFAULT_RANKING_WEIGHTS, type RankingWeights } from '../config/ranking-weights';
import { asksPreference, asksSeveral, stemsOf } from './memory-associations';
import { RankCandidate, rankMemories } from './memory-ranking';

const now = new Date('2026-11-21T12:00:00Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
const memory = (id: string, content: string, fields: Partial<RankCandidate> = {}): RankCandidate => ({
  id,
  content,
  textRank: 0,
  vectorSimilarity: null,
  importance: 0.5,
  decayFactor: 1,
  createdAt: minutesAgo(10),
  lastAccessedAt: null,
  ...fields,
});
const withAssociations = (associations: Partial<RankingWeights['associations']>): RankingWeights => ({
  ...DEFAULT_RANKING_WEIGHTS,
  associations: { ...DEFAULT_RANKING_WEIGHTS.associations, ...associations },
});
const noFeedback = withAssociations({ feedback: 0 });
const noCue = withAssociations({ cue: 0 });
const noSubject = withAssociations({ subject: 0 });
const noTime = withAssociations({ time: 0 });
const noSeveral = withAssociations({ several: 0 });
const ids = (ranked: RankCandidate[]) => ranked.map((candidate) => candidate.id);
/** The ids of the three first memories ranked for the question with these weights. */
const firstThree = (memories: RankCandidate[], weights: RankingWeights, question: string) =>
  ids(rankMemories(memories, now, weights, question)).slice(0, 3);

/** Memories that do not match the question, each with words of its own (the feedback words' rarity is among candidates). */
const others = [
  'bought new running shoes',
  'the dentist moved to a new office',
  'booked flights to Lisbon',
].map((content, i) => memory(`other-${i}`, content, { createdAt: minutesAgo(20 + i) }));

describe('pseudo-relevance feedback', () => {
  // the second step of a two-step answer shares no word with the question, only with the first step
  const question = 'What does Anna do on hikes?';
  const candidates = [
    memory('match', 'Anna: on our hike we roasted marshmallows by the campfire', { textRank: 2 }),
    memory('second-step', 'Anna: campfire stories and marshmallows make our summers'),
    // newer: without feedback it goes first among the memories the question's words do not find
    memory('unrelated', 'Anna: the car needs new tyres', { createdAt: minutesAgo(1) }),
    ...others,
  ];

  it("lifts a memory that shares the strongest match's distinctive words above one that does not", () => {
    expect(ids(rankMemories(candidates, now, noFeedback, question)).slice(0, 3)).toEqual([
      'match',
      'unrelated',
      'second-step',
    ]);
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, question)).slice(0, 3)).toEqual([
      'match',
      'second-step',
      'unrelated',
    ]);
  });

  it('compares words by their stems, so an inflection of a feedback word counts', () => {
    const inflected = [
      memory('match', 'Anna: painting horses at the hiking club', { textRank: 2 }),
      memory('painted', 'Anna: she painted a horse last spring'),
      memory('unrelated', 'Anna: the car needs new tyres', { createdAt: minutesAgo(1) }),
      ...others,
    ];
    expect(stemsOf('she painted horses')).toEqual(stemsOf('painting a horse'));
    expect(ids(rankMemories(inflected, now, DEFAULT_RANKING_WEIGHTS, question)).slice(0, 2)).toEqual([
      'match',
      'painted',
    ]);
  });

  it('adds at most its weight: a feedback-only memory stays below a match of the question', () => {
    const ranked = rankMemories(
      [...candidates, memory('weak-match', 'Anna: hikes are tiring', { textRank: 0.5 })],
      now,
      DEFAULT_RANKING_WEIGHTS,
      question,
    );
    expect(ids(ranked).indexOf('weak-match')).toBeLessThan(ids(ranked).indexOf('second-step'));
  });

  it('does nothing without a question', () => {
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS))).toEqual(
      ids(rankMemories(candidates, now, noFeedback)),
    );
  });
});

describe('question cue: preferences', () => {
  const candidates = [
    memory('preference', 'Anna: I love classical music, Bach above all', { textRank: 1 }),
    // newer, with the same match: first unless the question asks about a preference
    memory('event', 'Anna: went to a classical music concert', { textRank: 1, createdAt: minutesAgo(1) }),
  ];

  it('reads "would ... enjoy" and "is ... likely to" as questions about preferences', () => {
    expect(asksPreference('Would Anna enjoy a Vivaldi concert?')).toBe(true);
    expect(asksPreference('Is Anna likely to pursue music as a career?')).toBe(true);
    expect(asksPreference('When did Anna go to a concert?')).toBe(false);
  });

  it('puts the memory that says what someone likes first for a question about preferences', () => {
    const asked = 'Would Anna enjoy classical music?';
    expect(ids(rankMemories(candidates, now, noCue, asked))).toEqual(['event', 'preference']);
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, asked))).toEqual([
      'preference',
      'event',
    ]);
  });

  it('leaves other questions alone', () => {
    expect(
      ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, 'When did Anna hear classical music?')),
    ).toEqual(['event', 'preference']);
  });
});

describe('question cue: the subject', () => {
  const candidates = [
    memory('about', 'Anna: I painted the lake at sunrise', { textRank: 1 }),
    // newer, with the same match: it names Anna only to speak to her
    memory('addressed', 'Ben: Thanks, Anna! Did you paint it yourself?', {
      textRank: 1,
      createdAt: minutesAgo(1),
    }),
  ];

  it('puts the memory that opens with a name the question asks about first', () => {
    const asked = 'What did Anna paint?';
    expect(ids(rankMemories(candidates, now, noSubject, asked))).toEqual(['addressed', 'about']);
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, asked))).toEqual([
      'about',
      'addressed',
    ]);
  });

  it('takes a name that opens the question for its subject', () => {
    const asked = 'Anna said she painted something: what?';
    expect(ids(rankMemories(candidates, now, noSubject, asked))).toEqual(['addressed', 'about']);
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, asked))).toEqual([
      'about',
      'addressed',
    ]);
  });

  it('leaves a question that names no one alone', () => {
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, 'What did she paint?'))).toEqual([
      'addressed',
      'about',
    ]);
  });
});

describe('question cue: time', () => {
  const candidates = [
    memory('dated', 'Anna: I painted the lake last week', { textRank: 1 }),
    // newer, with the same match, but it does not say when
    memory('undated', 'Anna: the lake painting hangs in my hall', { textRank: 1, createdAt: minutesAgo(1) }),
  ];

  it('puts the memory that says when first for a question about a time', () => {
    const asked = 'When did Anna paint the lake?';
    expect(ids(rankMemories(candidates, now, noTime, asked))).toEqual(['undated', 'dated']);
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, asked))).toEqual(['dated', 'undated']);
  });

  it('leaves other questions alone', () => {
    expect(ids(rankMemories(candidates, now, DEFAULT_RANKING_WEIGHTS, 'What did Anna paint?'))).toEqual([
      'undated',
      'dated',
    ]);
  });
});

describe('question cue: several things of a kind', () => {
  const question = 'What books has Anna read?';
  const candidates = [
    memory('first', 'Anna: I read books by Ursula Le Guin', { textRank: 2 }),
    // said next to the first match: it shares its rank (0.7 of it) but names no book
    memory('next-to-first', 'Anna: the library closes early on Sundays', {
      textRank: 1.4,
      anchorId: 'first',
    }),
    // a second answer of its own, matched by fewer of the question's words
    memory('second', 'Anna: finished two books on the train', { textRank: 1.3 }),
    ...others,
  ];

  it('reads a plural after the question word as a question about several things', () => {
    expect(asksSeveral(question)).toBe(true);
    expect(asksSeveral('Which cities has Anna visited?')).toBe(true);
    expect(asksSeveral('What are some changes Anna has faced?')).toBe(true);
    expect(asksSeveral('What musical artists/bands has Anna seen?')).toBe(true);
    expect(asksSeveral('What does Anna do on hikes?')).toBe(false);
    expect(asksSeveral("What is Anna's job?")).toBe(false);
    expect(asksSeveral('What class did Anna take?')).toBe(false);
    expect(asksSeveral('When did Anna read it?')).toBe(false);
  });

  it('puts a second match above the neighbour of the first for a question about several things', () => {
    expect(firstThree(candidates, noSeveral, question)).toEqual(['first', 'next-to-first', 'second']);
    expect(firstThree(candidates, DEFAULT_RANKING_WEIGHTS, question)).toEqual([
      'first',
      'second',
      'next-to-first',
    ]);
  });

  it('leaves a question about one thing alone', () => {
    const one = 'What book has Anna read?';
    expect(firstThree(candidates, DEFAULT_RANKING_WEIGHTS, one)).toEqual([
      'first',
      'next-to-first',
      'second',
    ]);
  });
});
