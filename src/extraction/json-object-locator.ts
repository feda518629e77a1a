import { isPlainObject } from '../common/json-values';

export type LocatedJsonObject = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** Tries at most this many `{` starts when scanning prose for an object, to bound the work. */
const MAX_OBJECT_CANDIDATES = 50;
const FENCE = '```';

/**
 * Finds the JSON object in a model's answer: the whole answer, else the contents of a ``` fence, else
 * the first balanced `{...}` that parses. `accept` picks among parsed objects (e.g. "has the expected
 * keys"), so a stray `{}` in prose does not hide the real answer. A top-level array is not accepted.
 */
export function locateJsonObject(
  text: string,
  accept: (value: Record<string, unknown>) => boolean = () => true,
): LocatedJsonObject {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed.length === 0) return { ok: false, reason: 'the answer is empty' };

  const whole = tryParse(trimmed);
  if (Array.isArray(whole)) return { ok: false, reason: 'the answer is a JSON array, not an object' };
  let sawObject = isPlainObject(whole);
  if (isPlainObject(whole) && accept(whole)) return { ok: true, value: whole };

  for (const candidate of [...fencedBlocks(trimmed), ...balancedObjects(trimmed)]) {
    const value = tryParse(candidate);
    if (!isPlainObject(value)) continue;
    sawObject = true;
    if (accept(value)) return { ok: true, value };
  }
  return {
    ok: false,
    reason: sawObject
      ? 'no JSON object in the answer has the expected shape'
      : 'no JSON object in the answer',
  };
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Contents of ``` fences, without the info string (`json`, ...) on the opening line. */
function fencedBlocks(text: string): string[] {
  const blocks: string[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf(FENCE, from);
    if (open < 0) break;
    const close = text.indexOf(FENCE, open + FENCE.length);
    if (close < 0) break;
    const inner = text.slice(open + FENCE.length, close);
    const newline = inner.indexOf('\n');
    const infoString = newline < 0 ? '' : inner.slice(0, newline);
    blocks.push(/^[\w-]*\s*$/.test(infoString) && newline >= 0 ? inner.slice(newline + 1) : inner);
    from = close + FENCE.length;
  }
  return blocks;
}

/** Substrings from a `{` to its matching `}`, ignoring braces inside JSON strings. */
function* balancedObjects(text: string): Generator<string> {
  let start = text.indexOf('{');
  for (let tries = 0; start >= 0 && tries < MAX_OBJECT_CANDIDATES; tries++) {
    const end = matchingBrace(text, start);
    if (end >= 0) yield text.slice(start, end + 1);
    start = text.indexOf('{', start + 1);
  }
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{') {
      depth++;
    } else if (char === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
