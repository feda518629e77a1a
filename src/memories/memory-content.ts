import { createHash } from 'node:crypto';

const TRAILING_SENTENCE_PUNCTUATION = new Set(['.', '!', '?', '…', '。', '！', '？', ' ']);

/**
 * The form of a memory's content used to recognise duplicates: NFKC, lower case, runs of whitespace
 * collapsed to one space, trimmed, without trailing sentence punctuation.
 */
export function normaliseMemoryContent(content: string): string {
  const collapsed = content.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  // A backwards loop rather than a `[...]+$` regex, which is quadratic on long runs of punctuation.
  let end = collapsed.length;
  while (end > 0 && TRAILING_SENTENCE_PUNCTUATION.has(collapsed[end - 1])) end--;
  return collapsed.slice(0, end);
}

/** SHA-256 (hex) of the normalised content; the key of the (profile_id, content_hash) uniqueness. */
export function memoryContentHash(content: string): string {
  return createHash('sha256').update(normaliseMemoryContent(content), 'utf8').digest('hex');
}
