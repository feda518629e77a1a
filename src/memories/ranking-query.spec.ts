import { MAX_QUESTION_CHARS } from './memory-candidates';
import { rankingQuery } from './ranking-query';

describe('rankingQuery', () => {
  const previous = 'Tell me about my sister Anna.';

  it.each([
    ['And her brother?'],
    ['what about Tom?'],
    ['Why?'],
    ['Is she older than him?'],
    ['How about that one?'],
  ])('joins the previous message to a follow-up: %s', (turn) => {
    expect(rankingQuery(turn, previous)).toBe(`${previous}\n${turn}`);
  });

  it.each([
    ['What should I cook tonight for my kids?'],
    ['Which programming language do I use at work these days?'],
    ['Recommend a book about sailing.'],
  ])('ranks a question that stands alone by itself: %s', (turn) => {
    expect(rankingQuery(turn, previous)).toBe(turn);
  });

  it('has nothing to join on the first message', () => {
    expect(rankingQuery('And her brother?', undefined)).toBe('And her brother?');
    expect(rankingQuery('  Why?  ', '   ')).toBe('Why?');
  });
});

describe('the bound on what rankingQuery reads', () => {
  it('reads each text up to MAX_QUESTION_CHARS, as the ranking statements do', () => {
    const long = 'word '.repeat(2 * MAX_QUESTION_CHARS);
    expect(rankingQuery(long, undefined).length).toBeLessThanOrEqual(MAX_QUESTION_CHARS);
    expect(rankingQuery(long, 'and before?').length).toBeLessThanOrEqual(MAX_QUESTION_CHARS);
    const followUp = rankingQuery('and her?', long);
    expect(followUp.length).toBeLessThanOrEqual(MAX_QUESTION_CHARS + '\nand her?'.length);
    expect(followUp.endsWith('\nand her?')).toBe(true);
  });
});
