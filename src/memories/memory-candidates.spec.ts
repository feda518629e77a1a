import { namesIn } from './memory-candidates';

describe('namesIn', () => {
  it('finds capitalised words inside a sentence and words in capitals anywhere', () => {
    expect(namesIn('When did I meet Will and Don in the US?')).toEqual(['will', 'don', 'us']);
    expect(namesIn('IT said the WHO report was late')).toEqual(['it', 'who']);
  });

  it('does not take the word that opens a sentence, or a single letter, for a name', () => {
    expect(namesIn('Will it rain? Can I go out. Then what')).toEqual([]);
    expect(namesIn('Where did I go?\nWhat did I see')).toEqual([]);
  });

  it('takes a capitalised word that opens a sentence for a name unless it is a stop word or a negation', () => {
    expect(namesIn('Caroline said she would call. When?')).toEqual(['caroline']);
    expect(namesIn("Melanie's kids: what do they like? Anna knows")).toEqual(['melanie', 'anna']);
    expect(namesIn("Don't forget what Anna said. Wouldn't she come?")).toEqual(['anna']);
  });

  it('reads letters of any script and keeps each name once', () => {
    expect(namesIn('Was hat Zoë über Zoë gesagt?')).toEqual(['zoë']);
    expect(namesIn('')).toEqual([]);
  });

  it('stops at 32 names', () => {
    const question = `List ${Array.from({ length: 50 }, (_, i) => `Name${i}`).join(' ')}`;
    expect(namesIn(question)).toHaveLength(32);
  });
});
