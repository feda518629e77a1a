import { sortShort } from '../common/sort-short';
import type { QuestionUnit } from '../memories/held-memory-candidates';
import { MAX_NAMES, MAX_QUESTION_WORDS, STOP_WORDS } from '../memories/memory-candidates';

/** Words remembered with their stem; past this the memory starts again. */
const REMEMBERED_WORDS = 50_000;
/** A longer word is left to the database (PostgreSQL's parser has limits of its own for long words). */
const LONGEST_PLAIN_WORD = 64;

/**
 * Text that PostgreSQL's default text-search parser splits exactly where it has a character other than
 * an ASCII letter or digit: those, spaces and the punctuation below. A full stop only before a space or
 * the end (`a.b` is a host name to the parser, `e.g` a file name), and none after a digit (`3.5`).
 * Anything else (hyphens, slashes, `@`, `&`, `<`, `_`, non-ASCII letters ...) can make the parser
 * keep characters together, so such a question is left to the database.
 */
const PLAIN_TEXT = /^[A-Za-z0-9 \t\r\n,?!;:"'()[\].]*$/;
const UNSAFE_FULL_STOP = /\.[^ \t\r\n]|[0-9]\./;
/** PostgreSQL's `english` configuration hands unsigned integers to the `simple` dictionary: kept as written. */
const NUMBER = /^[0-9]+$/;

/**
 * The question's words (QuestionUnit: as written, stemmed) found in the process, as the database's
 * questionUnitsSql finds them (with the names namesIn finds), so that a held context can be used
 * without asking the database. The stems are the database's own: learnt from its answers for earlier
 * questions (`learn`), a word with no stem being a stop word; a number is its own stem. A question
 * with a word not learnt yet, or with characters the parser might read differently (PLAIN_TEXT), gets
 * no units here and goes to the database.
 */
export class QuestionWords {
  /** A word as written (lower case) and its unit; null for a stop word. Units are shared, never changed. */
  private readonly known = new Map<string, QuestionUnit | null>();

  /** The question's units in canonical order, or null when the database has to find them. */
  unitsOf(text: string): QuestionUnit[] | null {
    const read = readPlain(text);
    if (read === null) return null;
    const units: QuestionUnit[] = [];
    for (const exact of read.words) {
      const unit = NUMBER.test(exact) ? { unit: exact, exact, stem: exact } : this.known.get(exact);
      if (unit === undefined) return null;
      if (unit !== null) units.push(unit);
      else if (read.names.includes(exact)) units.push({ unit: exact, exact, stem: null });
    }
    if (units.length <= MAX_QUESTION_WORDS) return withoutRepeats(inCanonicalOrder(units));
    // the database keeps the names first, then the longest words, then in order of the words
    const distinct = [...new Map(units.map((unit) => [unit.exact, unit])).values()];
    distinct.sort(
      (a, b) =>
        Number(read.names.includes(b.exact)) - Number(read.names.includes(a.exact)) ||
        b.exact.length - a.exact.length ||
        compare(a.exact, b.exact),
    );
    return inCanonicalOrder(distinct.slice(0, MAX_QUESTION_WORDS));
  }

  /**
   * Learns the stems of a plain question's words from the database's units for it: a word among them
   * has their stem; a word missing from all of them is a stop word (only known when the database did
   * not stop at MAX_QUESTION_WORDS). Units that do not match the question's words teach nothing.
   */
  learn(text: string, names: readonly string[], units: readonly QuestionUnit[]): void {
    const read = readPlain(text);
    if (read === null) return;
    const words = new Set(read.words);
    const stems = new Map<string, string | null>();
    for (const unit of units) {
      if (!words.has(unit.exact)) return;
      stems.set(unit.exact, unit.stem);
    }
    const complete = units.length < MAX_QUESTION_WORDS;
    for (const word of words) {
      const stem = stems.has(word) ? stems.get(word)! : complete && !names.includes(word) ? null : undefined;
      if (stem === undefined) continue;
      const known = this.known.get(word);
      if (known !== undefined && (known?.stem ?? null) === stem) continue;
      if (this.known.size >= REMEMBERED_WORDS) this.known.clear();
      this.known.set(word, stem === null ? null : { unit: stem, exact: word, stem });
    }
  }

  get size(): number {
    return this.known.size;
  }
}

/**
 * A plain question's words in lower case (repeats included, in order) and its names as namesIn finds
 * them (a capitalised word opening a sentence is one unless a stop word or a negation's first part),
 * read in one pass over its characters; null when it is not plain text for the parser.
 */
function readPlain(text: string): { words: string[]; names: string[] } | null {
  if (!PLAIN_TEXT.test(text) || UNSAFE_FULL_STOP.test(text)) return null;
  const words: string[] = [];
  const names: string[] = [];
  // a word opens a sentence when it is the first, or a full stop, `!`, `?` or a new line came before it
  let opensSentence = true;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (!isAsciiLetterOrDigit(code)) {
      if (code === 0x2e || code === 0x21 || code === 0x3f || code === 0x0a) opensSentence = true;
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isAsciiLetterOrDigit(text.charCodeAt(i))) i++;
    if (i - start > LONGEST_PLAIN_WORD) return null;
    const written = text.slice(start, i);
    const word = written.toLowerCase();
    words.push(word);
    const capital = code >= 0x41 && code <= 0x5a;
    if (
      capital &&
      written.length >= 2 &&
      names.length < MAX_NAMES &&
      (!opensSentence || written === written.toUpperCase() || !(STOP_WORDS.has(word) || negation(text, i))) &&
      !names.includes(word)
    ) {
      names.push(word);
    }
    opensSentence = false;
  }
  return { words, names };
}

/** Whether `'t` and no more letters follow position `at` ("Don" of "Don't"), as namesIn reads a negation. */
function negation(text: string, at: number): boolean {
  return (
    text[at] === "'" &&
    (text[at + 1] === 't' || text[at + 1] === 'T') &&
    !(at + 2 < text.length && isAsciiLetterOrDigit(text.charCodeAt(at + 2)))
  );
}

function isAsciiLetterOrDigit(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** Units in canonical order without the repeats of a word (which sit together in that order). */
function withoutRepeats(units: QuestionUnit[]): QuestionUnit[] {
  let kept = 0;
  for (const unit of units) {
    const last = kept > 0 ? units[kept - 1] : undefined;
    if (last === undefined || last.exact !== unit.exact || last.unit !== unit.unit) units[kept++] = unit;
  }
  units.length = kept;
  return units;
}

/**
 * Units in one order whatever found them: the database hands them over in no defined order, and the
 * ranking adds up per unit, so the same units in another order could differ in a last bit.
 */
export function inCanonicalOrder(units: QuestionUnit[]): QuestionUnit[] {
  return sortShort(units, (a, b) => compare(a.unit, b.unit) || compare(a.exact, b.exact));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
