import type { QuestionUnit } from '../memories/held-memory-candidates';
import { MAX_QUESTION_WORDS } from '../memories/memory-candidates';

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
const WORD = /[A-Za-z0-9]+/g;
/** PostgreSQL's `english` configuration hands unsigned integers to the `simple` dictionary: kept as written. */
const NUMBER = /^[0-9]+$/;

/**
 * The question's words (QuestionUnit: as written, stemmed) found in the process, as the database's
 * questionUnitsSql finds them, so that a held context can be used without asking the database. The
 * stems are the database's own: learnt from its answers for earlier questions (`learn`), a word with
 * no stem being a stop word; a number is its own stem. A question with a word not learnt yet, or with characters the parser might
 * read differently (PLAIN_TEXT), gets no units here and goes to the database.
 */
export class QuestionWords {
  /** A word as written (lower case) and its English stem; null for a stop word. */
  private readonly stems = new Map<string, string | null>();

  /** The question's units in canonical order, or null when the database has to find them. */
  unitsOf(text: string, names: readonly string[]): QuestionUnit[] | null {
    const words = plainWords(text);
    if (words === null) return null;
    const units: QuestionUnit[] = [];
    for (const exact of words) {
      const stem = NUMBER.test(exact) ? exact : this.stems.get(exact);
      if (stem === undefined) return null;
      if (stem !== null || names.includes(exact)) units.push({ unit: stem ?? exact, exact, stem });
    }
    // the database keeps the names first, then the longest words, then in order of the words
    const named = new Set(names);
    units.sort(
      (a, b) =>
        Number(named.has(b.exact)) - Number(named.has(a.exact)) ||
        b.exact.length - a.exact.length ||
        compare(a.exact, b.exact),
    );
    return inCanonicalOrder(units.slice(0, MAX_QUESTION_WORDS));
  }

  /**
   * Learns the stems of a plain question's words from the database's units for it: a word among them
   * has their stem; a word missing from all of them is a stop word (only known when the database did
   * not stop at MAX_QUESTION_WORDS). Units that do not match the question's words teach nothing.
   */
  learn(text: string, names: readonly string[], units: readonly QuestionUnit[]): void {
    const words = plainWords(text);
    if (words === null) return;
    const stems = new Map<string, string | null>();
    for (const unit of units) {
      if (!words.has(unit.exact)) return;
      stems.set(unit.exact, unit.stem);
    }
    const complete = units.length < MAX_QUESTION_WORDS;
    for (const word of words) {
      const stem = stems.has(word) ? stems.get(word)! : complete && !names.includes(word) ? null : undefined;
      if (stem === undefined || this.stems.get(word) === stem) continue;
      if (this.stems.size >= REMEMBERED_WORDS) this.stems.clear();
      this.stems.set(word, stem);
    }
  }

  get size(): number {
    return this.stems.size;
  }
}

/** The question's words in lower case, or null when it is not plain text for the parser. */
function plainWords(text: string): Set<string> | null {
  if (!PLAIN_TEXT.test(text) || UNSAFE_FULL_STOP.test(text)) return null;
  const words = new Set<string>();
  for (const [word] of text.matchAll(WORD)) {
    if (word.length > LONGEST_PLAIN_WORD) return null;
    words.add(word.toLowerCase());
  }
  return words;
}

/**
 * Units in one order whatever found them: the database hands them over in no defined order, and the
 * ranking adds up per unit, so the same units in another order could differ in a last bit.
 */
export function inCanonicalOrder(units: QuestionUnit[]): QuestionUnit[] {
  return units.sort((a, b) => compare(a.unit, b.unit) || compare(a.exact, b.exact));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
