import { MAX_QUESTION_CHARS } from './memory-candidates';

/** Words that point back at something said before ("and her brother?", "what about that one?"). */
const REFERRING_WORDS = new Set(
  `he she it they him her them his hers its their theirs that those this these there then one ones
   same else too also`.split(/\s+/),
);
/** Openings of a follow-up question. */
const FOLLOW_UP = /^(?:and|or|but|also|so|then|what about|how about|same for|what else)\b/i;
/** A question this short ("and her brother?") rarely says what it is about. */
const SHORT_WORDS = 6;
const VERY_SHORT_WORDS = 3;

/**
 * The text memories are ranked by: this turn's user text, joined by the user's previous message when
 * the turn is a follow-up that cannot stand alone: it opens as one ("and ...", "what about ..."), is
 * very short, or is short and points back ("her", "that"). A question that stands alone is ranked by
 * itself, so an earlier topic does not pull in memories about it. Each text is read up to
 * MAX_QUESTION_CHARS, as far as the ranking reads a question.
 */
export function rankingQuery(turn: string, previous: string | undefined): string {
  // the statements read no more of a question (context-statement.ts): a long message is not read whole
  const text = turn.slice(0, MAX_QUESTION_CHARS).trim();
  if (!previous?.trim()) return text;
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  const followUp =
    FOLLOW_UP.test(text) ||
    words.length <= VERY_SHORT_WORDS ||
    (words.length <= SHORT_WORDS && words.some((word) => REFERRING_WORDS.has(word)));
  return followUp ? `${previous.slice(0, MAX_QUESTION_CHARS).trim()}\n${text}` : text;
}
