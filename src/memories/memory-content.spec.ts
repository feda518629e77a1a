import { createHash } from 'node:crypto';
import { memoryContentHash, normaliseMemoryContent } from './memory-content';

describe('normaliseMemoryContent', () => {
  it.each([
    ['I have two kids.', 'i have two kids'],
    ['  I   have\ttwo\nkids  ', 'i have two kids'],
    ['Really?!...', 'really'],
    ['Wait… what？', 'wait... what'],
    ['ＩＫＥＡ　ｆａｎ', 'ikea fan'],
    ['ﬁne', 'fine'],
    ['Ends with 3.5', 'ends with 3.5'],
    ['Keeps, inner; punctuation: yes.', 'keeps, inner; punctuation: yes'],
    ['東京に住んでいます。', '東京に住んでいます'],
    ['...', ''],
    ['', ''],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseMemoryContent(input)).toBe(expected);
  });

  it('terminates on a long run of punctuation', () => {
    expect(normaliseMemoryContent(`${'.'.repeat(100_000)}x${'. '.repeat(50_000)}`)).toBe(
      `${'.'.repeat(100_000)}x`,
    );
  });
});

describe('memoryContentHash', () => {
  it('is the SHA-256 hex of the normalised content', () => {
    const expected = createHash('sha256').update('i have two kids').digest('hex');

    expect(memoryContentHash('I have two kids.')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for contents that differ only in case, spacing and final punctuation', () => {
    expect(memoryContentHash(' I HAVE  two kids!')).toBe(memoryContentHash('i have two kids'));
  });

  it('differs for different contents', () => {
    expect(memoryContentHash('I have two kids.')).not.toBe(memoryContentHash('I have three kids.'));
  });
});
