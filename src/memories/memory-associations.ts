import stem from 'wink-porter2-stemmer';
import type { QuestionAssociationWeights } from '../config/ranking-weights';
import { namesIn, STOP_WORDS } from './memory-candidates';

/** What the association stage needs of a candidate: its text, and whether it matched the question itself. */
export interface AssociationCandidate {
  content?: string;
  textRank: number;
  anchorId?: string | null;
}

/** What the association stage reads from a text. */
export interface TextWords {
  /** Its words' stems, each once. */
  stems: readonly string[];
  /** Whether it says what someone likes. */
  preference: boolean;
  /** Its first word in lower case: the subject of a statement ("Anna moved ...", "Anna (May 8): ..."). */
  opening: string;
  /** Whether it places something in time relative to when it was said ("yesterday", "last week"). */
  dated: boolean;
}

/** Memories' texts remembered with what was read from them; past this the memory starts again. */
const REMEMBERED_TEXTS = 10_000;
/** Words remembered with their stems; past this the memory starts again. */
const REMEMBERED_WORDS = 50_000;
/** A longer run of letters is not a word. */
const LONGEST_WORD = 64;
const wordsByText = new Map<string, TextWords>();
const stemByWord = new Map<string, string>();

/** Words that say what someone likes, or is like. */
const PREFERENCE_WORDS =
  /\b(?:love[sd]?|loving|like[sd]?|enjoy(?:s|ed)?|favou?rite|fan|passion(?:ate)?|prefer(?:s|red)?|into|interested|dream|hobby|hobbies|always|never)\b/i;

/** A question about a time ("when did ...", "how long ...", "what year ..."). */
const ASKS_TIME = /\b(?:when|how long|what (?:year|month|day|date|time))\b/i;
/**
 * Words that place an event in time relative to when it was told: the answer to a question about a
 * time is a memory that says when (a date the memory was stored with does not say it of the event).
 */
const TIME_WORDS =
  /\b(?:yesterday|today|tonight|tomorrow|ago|recently|last|next|since|soon|weekend|week|month|year|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b/i;
/** The first word of a text. */
const OPENING_WORD = /^[^\p{L}\p{N}]*([\p{L}\p{N}]+)/u;

/** "Would X like ...", "Is X likely to ...": a question about a preference or a trait, in two parts. */
const SUPPOSING = /\b(?:would|likely|might|could)\b/i;
const WANTING = /\b(?:like|enjoy|want|prefer|interested|be|consider|pursue)\b/i;

/** Whether the question asks about a preference or a trait ("would Anna enjoy ...", "is Anna likely to ..."). */
export function asksPreference(question: string): boolean {
  // two searches, each once over the text (one pattern with `.*` between them goes back over it)
  const supposing = SUPPOSING.exec(question);
  return supposing !== null && WANTING.test(question.slice(supposing.index + supposing[0].length));
}

/**
 * "What books ...", "which cities ...", "what are some changes ...": the (at most three) words that
 * follow the question word, one of which names what is asked about.
 */
const ASKED_KIND =
  /\b(?:what|which)\s+(?:(?:are|were)\s+(?:(?:some|the)\s+)?)?([\p{L}\p{N}'’-]+(?:[\s/]+[\p{L}\p{N}'’-]+){0,2})/iu;
/** A plural: a word of four letters or more ending in s, but not in ss or us ("class", "status"). */
const PLURAL = /^[\p{L}'’-]{2,}[^su'’]s$/u;

/**
 * Whether the question asks about several things of a kind ("what books has Anna read?", "which
 * cities ...", "what are some changes ..."): a plural among the words after its question word, before
 * any stop word ("what does ...", "what is ..." ask about one thing).
 */
export function asksSeveral(question: string): boolean {
  const kind = ASKED_KIND.exec(question);
  if (kind === null) return false;
  for (const word of kind[1].toLowerCase().split(/[\s/]+/)) {
    if (STOP_WORDS.has(word)) return false;
    if (PLURAL.test(word)) return true;
  }
  return false;
}

/** A lower-case word's Porter2 (Snowball English) stem; a number is its own. */
function stemOf(word: string): string {
  let known = stemByWord.get(word);
  if (known === undefined) {
    if (stemByWord.size >= REMEMBERED_WORDS) stemByWord.clear();
    known = /^[0-9]+$/.test(word) ? word : stem(word);
    stemByWord.set(word, known);
  }
  return known;
}

/** What a memory's text says to the association stage (remembered: a held profile's memories are ranked with every chat). */
export function wordsOf(text: string): TextWords {
  const known = wordsByText.get(text);
  if (known) return known;
  const words: TextWords = {
    stems: stemsOf(text),
    preference: PREFERENCE_WORDS.test(text),
    opening: OPENING_WORD.exec(text)?.[1].toLowerCase() ?? '',
    dated: TIME_WORDS.test(text),
  };
  if (wordsByText.size >= REMEMBERED_TEXTS) wordsByText.clear();
  wordsByText.set(text, words);
  return words;
}

/** The stems of a text's words other than stop words, each once (a question's are not remembered). */
export function stemsOf(text: string): string[] {
  const stems = new Set<string>();
  // a word with its clitic ("i'm", "melanie's") is one word: a stop word, or the word without it
  for (const [written] of text.toLowerCase().matchAll(/[\p{L}\p{N}]+(?:['’]\p{L}+)?/gu)) {
    if (written.length < 2 || written.length > LONGEST_WORD || STOP_WORDS.has(written)) continue;
    const word = written.replace(/['’]\p{L}+$/u, '');
    if (word.length >= 2 && !STOP_WORDS.has(word)) stems.add(stemOf(word));
  }
  return [...stems];
}

/**
 * Adds to each candidate's relevance (in [0, 1], changed in place) what the question's strongest
 * matches and the question's kind say about it:
 * - pseudo-relevance feedback: the distinctive words of the `feedbackMatches` strongest matches (in at
 *   most `feedbackWordShare` of the candidates, not the question's own) count for the other candidates
 *   that have them, each by its rarity among the candidates, up to `feedback` for the candidate sharing
 *   most: a memory that shares no word with the question but several with its best answers (the other
 *   half of a two-step answer) rises, below the question's own words;
 * - a question about a preference or trait ("would ... like", "is ... likely to") multiplies by
 *   1 + `cue` the relevance of memories that say what someone likes;
 * - a question naming someone (`namesIn`) multiplies by 1 + `subject` the relevance of memories that
 *   open with one of its names: a statement opens with its subject, so "Anna: I painted a lake" is
 *   about Anna, where "Thanks, Anna!" only speaks to her;
 * - a question about a time ("when ...", "how long ...") multiplies by 1 + `time` the relevance of
 *   memories that say when something happened relative to when they were said ("last week");
 * - a question about several things of a kind (`asksSeveral`: "what books ...") multiplies by
 *   1 - `several` the relevance of memories found next to or linked to a match (anchored): its answers
 *   are several matches of their own, which the neighbours of the strongest one would crowd out.
 * Words are compared by their Porter2 stems, so "painted" meets "painting".
 */
export function associate(
  candidates: readonly AssociationCandidate[],
  question: string,
  relevance: number[],
  weights: QuestionAssociationWeights,
): void {
  const count = candidates.length;
  if (count === 0 || question === '') return;
  if (weights.cue > 0 && asksPreference(question)) {
    for (let i = 0; i < count; i++) {
      if (wordsOf(candidates[i].content ?? '').preference) relevance[i] *= 1 + weights.cue;
    }
  }
  if (weights.several > 0 && asksSeveral(question)) {
    for (let i = 0; i < count; i++) if (candidates[i].anchorId) relevance[i] *= 1 - weights.several;
  }
  if (weights.feedback > 0 && weights.feedbackMatches > 0) {
    feedback(candidates, new Set(stemsOf(question)), relevance, weights);
  }
  // after the feedback: they weigh what it added too
  const time = weights.time > 0 && ASKS_TIME.test(question);
  const names = weights.subject > 0 ? namesIn(question) : [];
  if (time || names.length > 0) {
    for (let i = 0; i < count; i++) {
      const words = wordsOf(candidates[i].content ?? '');
      if (time && words.dated) relevance[i] *= 1 + weights.time;
      if (names.includes(words.opening)) relevance[i] *= 1 + weights.subject;
    }
  }
}

/** The pseudo-relevance feedback of `associate`, for a question of these stems (`own`). */
function feedback(
  candidates: readonly AssociationCandidate[],
  own: ReadonlySet<string>,
  relevance: number[],
  { feedback: share, feedbackMatches, feedbackWordShare }: QuestionAssociationWeights,
): void {
  const count = candidates.length;
  // the strongest matches of the question's own words (not the neighbours that share their rank)
  const strongest: number[] = [];
  for (let i = 0; i < count; i++)
    if (candidates[i].textRank > 0 && !candidates[i].anchorId) strongest.push(i);
  strongest.sort((a, b) => relevance[b] - relevance[a] || a - b);
  strongest.length = Math.min(strongest.length, feedbackMatches);
  if (strongest.length === 0) return;

  // the matches' words, with the number of candidates that have each
  const found = new Map<string, number>();
  for (const m of strongest) {
    for (const word of wordsOf(candidates[m].content ?? '').stems) if (!own.has(word)) found.set(word, 0);
  }
  const words = candidates.map((candidate) => wordsOf(candidate.content ?? '').stems);
  for (const stems of words) {
    for (const word of stems) {
      const seen = found.get(word);
      if (seen !== undefined) found.set(word, seen + 1);
    }
  }
  const weight = new Map<string, number>();
  // a word the match shares with one other candidate is distinctive however few the candidates
  const mostSeen = Math.max(2, count * feedbackWordShare);
  for (const [word, seen] of found) {
    if (seen <= mostSeen) weight.set(word, Math.log(count / seen));
  }
  if (weight.size === 0) return;
  const isStrongest = new Set(strongest);
  const shared = new Array<number>(count).fill(0);
  let most = 0;
  for (let i = 0; i < count; i++) {
    if (isStrongest.has(i)) continue;
    for (const word of words[i]) shared[i] += weight.get(word) ?? 0;
    if (shared[i] > most) most = shared[i];
  }
  if (most === 0) return;
  for (let i = 0; i < count; i++) relevance[i] += (share * shared[i]) / most;
}
