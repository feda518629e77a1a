import { splitIntoChunks } from './text-chunks';

describe('splitIntoChunks', () => {
  it('leaves a short text whole', () => {
    expect(splitIntoChunks('  one short text  ', 100)).toEqual(['one short text']);
    expect(splitIntoChunks('   ', 100)).toEqual([]);
  });

  it('cuts at paragraph breaks first, then sentences, then spaces, keeping every word', () => {
    const paragraphs = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)].join('\n\n');
    expect(splitIntoChunks(paragraphs, 90)).toEqual([
      'a'.repeat(40) + '\n\n' + 'b'.repeat(40),
      'c'.repeat(40),
    ]);
    const sentences = 'First sentence here. Second sentence here. Third one.';
    expect(splitIntoChunks(sentences, 30)).toEqual([
      'First sentence here.',
      'Second sentence here.',
      'Third one.',
    ]);
    const words = 'alpha beta gamma delta epsilon';
    expect(splitIntoChunks(words, 12).join(' ')).toBe(words);
  });

  it('cuts inside a word only when there is no boundary, never inside a surrogate pair', () => {
    expect(splitIntoChunks('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    const emoji = `${'x'.repeat(9)}😀${'y'.repeat(5)}`;
    const chunks = splitIntoChunks(emoji, 10);
    expect(chunks.join('')).toBe(emoji);
    expect(chunks.every((chunk) => chunk.length <= 10 && !/[\ud800-\udbff]$/.test(chunk))).toBe(true);
  });

  it('is linear enough for 100 KB', () => {
    const text = 'I like tea. '.repeat(10_000);
    const started = Date.now();
    const chunks = splitIntoChunks(text, 12_000);
    expect(Date.now() - started).toBeLessThan(500);
    expect(chunks.every((chunk) => chunk.length <= 12_000)).toBe(true);
    expect(chunks.join(' ').length).toBe(text.trim().length);
  });
});
