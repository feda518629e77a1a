/**
 * Splits a long text into pieces of at most `maxChars` characters for separate LLM calls, cutting at
 * the strongest boundary available: a blank line, then a line break, then a sentence end, then white
 * space, and only as a last resort inside a word. Pieces keep their text (trimmed); order is kept.
 */
export function splitIntoChunks(text: string, maxChars: number): string[] {
  const chunks: string[] = [];
  let rest = text.trim();
  while (rest.length > maxChars) {
    const cut = findCut(rest, maxChars);
    const piece = rest.slice(0, cut).trim();
    if (piece !== '') chunks.push(piece);
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') chunks.push(rest);
  return chunks;
}

const BOUNDARIES: RegExp[] = [/\n\s*\n/g, /\n/g, /[.!?。！？]\s/g, /\s/g];

/** The end of the first piece: the last strong boundary in the window, if it keeps the piece at least half full. */
function findCut(text: string, maxChars: number): number {
  const window = text.slice(0, maxChars);
  for (const boundary of BOUNDARIES) {
    let last = -1;
    for (const match of window.matchAll(boundary)) last = match.index + match[0].length;
    if (last >= maxChars / 2) return last;
  }
  const code = text.charCodeAt(maxChars - 1);
  return code >= 0xd800 && code <= 0xdbff ? maxChars - 1 : maxChars; // never split a surrogate pair
}
