import { questionText } from '../src/context/context-statement';
import { inCanonicalOrder, QuestionWords } from '../src/context/question-words';
import type { QuestionUnit } from '../src/memories/held-memory-candidates';
import { namesIn, questionUnitsSql } from '../src/memories/memory-candidates';
import { useTestApp } from './support/test-app';

const VOCABULARY = [
  ...['the', 'a', 'an', 'and', 'or', 'of', 'to', 'in', 'on', 'at', 'is', 'was', 'what', 'who', 'when'],
  ...['do', 'does', 'did', 'i', 'me', 'my', 'you', 'your', 'it', 's', 't', 'not', 'about', 'should', 'we'],
  ...['cook', 'cooking', 'cooked', 'tonight', 'given', 'know', 'knows', 'likes', 'liked', 'running'],
  ...['hiking', 'boots', 'Lisbon', 'Paris', 'Maria', 'NASA', 'IT', 'US', 'jazz', 'records', 'garden'],
  ...['organise', 'organizing', 'generously', 'happiness', 'studies', 'studying', 'relational', 'ponies'],
  ...['0', '7', '42', '2024', '000', '3rd', 'mp3', 'v2', '1e5', '0x1F', 'abc123def', 'B2B', 'x'],
];
/** Separators the parser reads as spaces, the full stop in the places where it is one, and others. */
const SEPARATORS = [
  ' ',
  ' ',
  ' ',
  ', ',
  '? ',
  '! ',
  '; ',
  ': ',
  '"',
  "'",
  '(',
  ') ',
  '[',
  ']',
  '. ',
  '\n',
  '\t',
];
const UNSAFE = ['-', '/', '@', '.', '&', '<', '>', '_', 'é', '\u00a0', '+', '#', '%', '~', '=', '*', '$'];

/** A deterministic pseudo-random source (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function question(next: () => number, unsafeShare: number): string {
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)];
  const length = 1 + Math.floor(next() * 30);
  let text = next() < 0.2 ? pick(SEPARATORS) : '';
  for (let i = 0; i < length; i++) {
    let word = pick(VOCABULARY);
    if (next() < 0.2) word = word[0].toUpperCase() + word.slice(1);
    if (next() < 0.05) word = word.toUpperCase();
    text += word + (next() < unsafeShare ? pick(UNSAFE) : pick(SEPARATORS));
  }
  return text;
}

/**
 * QuestionWords finds a question's words in the process only where it finds exactly what
 * questionUnitsSql finds in the database: same words, stems and stop words, same cut at
 * MAX_QUESTION_WORDS. Learnt from one set of questions, checked on another.
 */
describe('Question words found in the process, against the database', () => {
  const t = useTestApp();

  async function databaseUnits(text: string, names: string[]): Promise<QuestionUnit[]> {
    return t.dataSource.query(questionUnitsSql('$1', '$2::text[]'), [text, names]);
  }

  it('gives the database units wherever it gives any, and leaves other text to the database', async () => {
    const words = new QuestionWords();
    const next = random(20261125);
    for (let i = 0; i < 400; i++) {
      const text = questionText(question(next, 0));
      const names = namesIn(text);
      words.learn(text, names, await databaseUnits(text, names));
    }
    expect(words.size).toBeGreaterThan(VOCABULARY.length / 2);

    let answered = 0;
    let unsafeAnswered = 0;
    for (let i = 0; i < 1500; i++) {
      const unsafeShare = i % 3 === 0 ? 0.15 : 0;
      const text = questionText(question(next, unsafeShare));
      const names = namesIn(text);
      const units = words.unitsOf(text);
      if (units === null) continue;
      answered++;
      if (/[^A-Za-z0-9 \t\r\n,?!;:"'()[\].]/.test(text)) unsafeAnswered++;
      expect({ text, units }).toEqual({
        text,
        units: inCanonicalOrder(await databaseUnits(text, names)),
      });
    }
    expect(answered).toBeGreaterThan(900);
    // a question holding a hyphen, a slash, `@`, a non-ASCII letter ... is the database's to split
    expect(unsafeAnswered).toBe(0);
  });

  it('finds nothing for a word it has not learnt, nor for text the parser could join', () => {
    const words = new QuestionWords();
    words.learn(
      'cooking tonight',
      [],
      [
        { unit: 'cook', exact: 'cooking', stem: 'cook' },
        { unit: 'tonight', exact: 'tonight', stem: 'tonight' },
      ],
    );
    expect(words.unitsOf('cooking tonight?')).toEqual([
      { unit: 'cook', exact: 'cooking', stem: 'cook' },
      { unit: 'tonight', exact: 'tonight', stem: 'tonight' },
    ]);
    expect(words.unitsOf('cooking tomorrow')).toBeNull();
    for (const text of [
      'cooking-tonight',
      'cooking.tonight',
      'cooking 3.5',
      'cooking_tonight',
      'cooking/tonight',
    ]) {
      expect(words.unitsOf(text)).toBeNull();
    }
    // numbers are their own stem
    expect(words.unitsOf('cooking 2024')).toEqual([
      { unit: '2024', exact: '2024', stem: '2024' },
      { unit: 'cook', exact: 'cooking', stem: 'cook' },
    ]);
  });
});
