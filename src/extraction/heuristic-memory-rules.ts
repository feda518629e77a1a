import { ExtractedMemory, MemoryType } from './extraction-types';
import { factKindOf } from '../memories/fact-kinds';
import {
  CONTEXT_NOUNS,
  HIGH_IMPORTANCE_WORDS,
  PERSONAL_NOUNS,
  PREFERENCE_NOUNS,
  SENTENCE_LEAD_WORDS,
  TIME_MARKERS,
  splitWords,
} from './heuristic-lexicon';
import { AnalysedSentence, isNegation } from './heuristic-sentences';
import { CONVERSATIONAL_VERBS } from './heuristic-value-readers';
import { toThirdPerson } from './third-person';

/** Longer sentences are not kept as memories: a memory should be one plain statement. */
export const MAX_MEMORY_SENTENCE_LENGTH = 300;
const MIN_MEMORY_WORDS = 3;
const MAX_LEAD_WORDS = 6;

const BASE_IMPORTANCE: Record<MemoryType, number> = { fact: 0.6, preference: 0.6, event: 0.5, context: 0.5 };
const RELATIVE_IMPORTANCE = 0.5;
const IMPORTANCE_BOOST = 0.2;
const MAX_HEURISTIC_IMPORTANCE = 0.9;

const ADVERBS = new Set(
  splitWords(`
    really also actually usually always generally currently just still now recently absolutely totally
    definitely honestly mostly often sometimes rarely truly strongly much very even finally already
    normally mainly
  `),
);
const PREFERENCE_VERBS = new Set(
  splitWords('prefer like love enjoy hate dislike adore avoid loathe detest favour favor'),
);
const FACT_VERBS = new Set(
  splitWords(`
    have own work live study speak use teach manage lead play drive eat drink cook come follow practice
    practise volunteer commute rent suffer run walk cycle swim code program write read travel belong
  `),
);
const EVENT_VERBS = new Set(
  splitWords(`
    moved started finished ran graduated married got bought visited went lost won quit joined left
    became travelled traveled met completed launched sold passed failed retired adopted broke began
    arrived returned came took had spent built wrote learned learnt climbed hiked celebrated switched
    changed signed founded published released received earned ate flew gave made found hired started
    divorced
  `),
);
/** After "I was": things that happened to the user. */
const EVENT_PARTICIPLES = new Set(
  splitWords(`
    diagnosed promoted fired laid hired married injured accepted admitted awarded elected divorced
    transferred offered
  `),
);
/** After "I'm": lasting states. */
const STATE_WORDS = new Set(
  splitWords(`
    vegetarian vegan married single divorced engaged pregnant retired allergic intolerant lactose
    diabetic left-handed right-handed colorblind colourblind deaf blind self-employed unemployed
    freelance widowed from originally based located living new fluent native
  `),
);
/** After "I'm": what the user is in the middle of. */
const ONGOING_WORDS = new Set(
  splitWords(`
    working studying learning building writing training preparing planning trying developing saving
    recovering renovating
  `),
);
/** After "I'm": something about to happen. */
const UPCOMING_WORDS = new Set(['moving', 'getting', 'relocating', 'graduating', 'expecting', 'retiring']);
const FONDNESS_WORDS = new Set(['interested', 'passionate', 'fond', 'into', 'obsessed']);
/** Objects that make a sentence part of the conversation ("I have a question"). */
const CONVERSATIONAL_NOUNS = new Set(
  splitWords(`
    question questions problem issue doubt idea request suggestion query concern favour favor feeling
    bug error look try go follow-up comment thought thoughts clue
  `),
);
const QUANTIFIERS = new Set(splitWords('a an some another one few quick no any small more'));
const PRONOUN_OBJECTS = new Set(
  splitWords(`
    it this that these those them him her something anything everything what how when why which who to
  `),
);
const SECOND_PERSON = new Set(splitWords("you your yours yourself you're you've you'll you'd u"));
const STOP_BEFORE_NOUN = new Set(['is', 'are', 'was', 'were', 'has', 'have', 'had', 'and', 'will']);
/** The user's name is left to the name trait: "my name is ..." makes no memory. */
const KEY_FACT_NOUNS = new Set(['birthday', 'age']);

/**
 * The memory a sentence makes, or undefined. A memory is a plain first-person statement ("I have two
 * kids", "I prefer tea", "yesterday I ran a marathon", "my sister lives in Rome"); questions,
 * hypotheticals, requests, anything addressed to the assistant and sentences about others are not.
 * The content is the sentence rewritten about the user ("User lives in Lisbon"); a single-valued fact
 * (where they live, work, ...) carries its kind, so that a newer one supersedes it.
 */
export function classifyMemory(sentence: AnalysedSentence): ExtractedMemory | undefined {
  if (sentence.original.length > MAX_MEMORY_SENTENCE_LENGTH) return undefined;
  if (sentence.isQuestion || sentence.isHypothetical) return undefined;
  const words = expandContractions(sentence.words);
  if (words.length < MIN_MEMORY_WORDS) return undefined;
  if (words.some((word) => SECOND_PERSON.has(word) || word === 'please')) return undefined;

  const subject = firstSubjectIndex(words);
  if (subject < 0) return undefined;
  const rest = words.slice(subject + 1);
  const classified = words[subject] === 'i' ? classifyFirstPerson(rest) : classifyPossessive(rest, words);
  if (classified === undefined) return undefined;

  const type =
    classified.type === 'fact' && !classified.dated && hasTimeMarker(words) ? 'event' : classified.type;
  const base = classified.importance ?? BASE_IMPORTANCE[type];
  const boosted = words.some((word) => HIGH_IMPORTANCE_WORDS.has(word)) ? base + IMPORTANCE_BOOST : base;
  const importance = Math.min(MAX_HEURISTIC_IMPORTANCE, Math.round(boosted * 10) / 10);
  return {
    content: toThirdPerson(sentence.original),
    type,
    importance,
    factKey: factKindOf(sentence.original),
  };
}

interface Classification {
  type: MemoryType;
  importance?: number;
  /** A fact that stays a fact even with a date in it ("I was born in 1990"). */
  dated?: boolean;
}

function expandContractions(words: string[]): string[] {
  const expanded: string[] = [];
  for (const word of words) {
    if (word === "i'm") expanded.push('i', 'am');
    else if (word === "i've") expanded.push('i', 'have');
    else if (word === 'cannot' || word === "can't") expanded.push('can', 'not');
    else if (word === "won't") expanded.push('will', 'not');
    else if (word.endsWith("n't")) expanded.push(word.slice(0, -3), 'not');
    else expanded.push(word);
  }
  return expanded;
}

/** Index of the "i" or "my" that opens the sentence, after lead words such as "yesterday". */
function firstSubjectIndex(words: string[]): number {
  for (let i = 0; i < words.length && i <= MAX_LEAD_WORDS; i++) {
    if (words[i] === 'i' || words[i] === 'my') return i;
    if (!SENTENCE_LEAD_WORDS.has(words[i]) && !/^\d+$/.test(words[i])) return -1;
  }
  return -1;
}

/** Skips adverbs and negations ("do not", "never", "no longer") from `from`. */
function skipModifiers(words: string[], from: number): number {
  let i = from;
  for (;;) {
    const word = words[i];
    if (ADVERBS.has(word) || word === 'not' || word === 'never') i++;
    else if (word === 'no' && words[i + 1] === 'longer') i += 2;
    else if (['do', 'does', 'did', 'can'].includes(word) && words[i + 1] === 'not') i += 2;
    else return i;
  }
}

function classifyFirstPerson(rest: string[]): Classification | undefined {
  const verbAt = skipModifiers(rest, 0);
  const verb = rest[verbAt];
  const objectAt = skipModifiers(rest, verbAt + 1);
  const object = rest[objectAt];
  const afterObject = rest[objectAt + 1];

  if (verb === 'am') return classifyState(object, afterObject, rest[objectAt + 2]);
  if (verb === 'was') {
    if (object === 'born') return { type: 'fact', dated: true };
    return EVENT_PARTICIPLES.has(object) ? { type: 'event' } : undefined;
  }
  if (verb === 'used') return object === 'to' ? { type: 'fact' } : undefined;
  if (verb === 'have') return classifyHave(object, afterObject, rest[objectAt + 2]);
  if (verb === 'stand' && rest[verbAt - 1] === 'not') return { type: 'preference' };
  if (PREFERENCE_VERBS.has(verb))
    return isPronoun(object) && object !== 'to' ? undefined : { type: 'preference' };
  if (EVENT_VERBS.has(verb)) return isConversational(object, afterObject) ? undefined : { type: 'event' };
  if (FACT_VERBS.has(verb)) return isPronoun(object) ? undefined : { type: 'fact' };
  return undefined;
}

function classifyState(word: string, next: string, third: string): Classification | undefined {
  if (word === 'a' || word === 'an') {
    if (['bit', 'little', 'lot', 'tad'].includes(next)) return undefined;
    if ((next === 'big' || next === 'huge') && third === 'fan') return { type: 'preference' };
    return next === undefined ? undefined : { type: 'fact' };
  }
  if (/^\d+$/.test(word)) return { type: 'fact' };
  if (STATE_WORDS.has(word)) return { type: 'fact' };
  if (FONDNESS_WORDS.has(word)) return { type: 'preference' };
  if (UPCOMING_WORDS.has(word)) return { type: 'event' };
  if (ONGOING_WORDS.has(word)) return isVagueActivity(next, third) ? undefined : { type: 'context' };
  return undefined;
}

/** "trying to understand", "working on it", "building this": part of the conversation, not a memory. */
function isVagueActivity(next: string | undefined, third: string | undefined): boolean {
  if (next === 'to') return third === undefined || CONVERSATIONAL_VERBS.has(third);
  if (['on', 'for', 'at', 'with'].includes(next ?? '')) return isPronoun(third);
  return isPronoun(next) && next !== undefined;
}

function classifyHave(object: string, next: string, third: string): Classification | undefined {
  if (object === 'to' || object === undefined) return undefined;
  if (object === 'been') return { type: 'fact' };
  if (EVENT_VERBS.has(object) && object !== 'got' && object !== 'had') return { type: 'event' };
  if (object === 'got')
    return isConversational(next, third) || isPronoun(next) ? undefined : { type: 'fact' };
  if (object.endsWith('ed')) return { type: 'fact' };
  return isConversational(object, next) || isPronoun(object) ? undefined : { type: 'fact' };
}

function isConversational(object: string, next: string): boolean {
  return CONVERSATIONAL_NOUNS.has(object) || (QUANTIFIERS.has(object) && CONVERSATIONAL_NOUNS.has(next));
}

function isPronoun(word: string | undefined): boolean {
  return word === undefined || PRONOUN_OBJECTS.has(word);
}

/** "My sister lives in Rome": about the user's own life, so kept, with a lower importance. */
function classifyPossessive(rest: string[], words: string[]): Classification | undefined {
  for (const word of rest.slice(0, 3)) {
    if (STOP_BEFORE_NOUN.has(word)) return undefined;
    if (PREFERENCE_NOUNS.has(word)) return { type: 'preference' };
    if (CONTEXT_NOUNS.has(word)) return { type: 'context' };
    if (word === 'name') return undefined;
    if (KEY_FACT_NOUNS.has(word))
      return words.some(isNegation) ? undefined : { type: 'fact', importance: 0.7 };
    if (PERSONAL_NOUNS.has(word)) return { type: 'fact', importance: RELATIVE_IMPORTANCE };
  }
  return undefined;
}

function hasTimeMarker(words: string[]): boolean {
  return words.some(
    (word, i) => TIME_MARKERS.has(word) || (word === 'in' && /^(?:19|20)\d\d$/.test(words[i + 1] ?? '')),
  );
}
