import { lowerCaseWords, splitIntoSentences } from './heuristic-sentences';

describe('splitIntoSentences', () => {
  it('collapses every run of white space to one space, whatever the spaces are, and trims', () => {
    expect(splitIntoSentences('  I  live\tin\u00a0Oslo.\u3000I am  a\u2028nurse!  ')).toEqual([
      'I live in Oslo.',
      'I am a nurse!',
    ]);
    expect(splitIntoSentences('One space apart. Stays as written')).toEqual([
      'One space apart.',
      'Stays as written',
    ]);
  });

  it('ends a sentence at every line break, of any kind', () => {
    expect(splitIntoSentences('a\r\nb\rc\nd')).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('lowerCaseWords', () => {
  it('gives the same words for ASCII text and for text beyond it', () => {
    expect(lowerCaseWords("I'm a Night-Owl, 24/7")).toEqual(["i'm", 'a', 'night-owl', '24', '7']);
    expect(lowerCaseWords('I’m in Zürich, 5 \u212Am away')).toEqual([
      "i'm",
      'in',
      'zürich',
      '5',
      'km',
      'away',
    ]);
  });
});
