import { splitWords } from './heuristic-lexicon';

/** Sentences longer than this are not analysed: too long to be a plain statement about oneself. */
export const MAX_ANALYSED_SENTENCE_LENGTH = 500;

export interface AnalysedSentence {
  /** As written, trimmed, runs of whitespace collapsed. */
  original: string;
  /** `original` with typographic apostrophes made straight (same length), for matching. */
  text: string;
  /** Lower-case words, typographic apostrophes made straight. */
  words: string[];
  isQuestion: boolean;
  /** "Can you ...", "Could you please ...": a question that is really a request. */
  isPoliteRequest: boolean;
  /** Conditional, imagined, hedged or wished-for, so not a statement of fact. */
  isHypothetical: boolean;
}

/** A run of the characters that end a sentence. */
const SENTENCE_ENDS = /[.!?。！？…]+/g;
const QUESTION_END = new Set(['?', '？']);
const WH_WORDS = new Set(['what', 'why', 'how', 'when', 'where', 'who', 'whom', 'whose', 'which']);
const AUXILIARIES = new Set(
  splitWords(`
    do does did is are am was were can could would will should shall may might have has had isn't aren't
    don't doesn't didn't won't wouldn't can't couldn't shouldn't
  `),
);
const QUESTION_SUBJECTS = new Set(
  splitWords('you i we it this that there my he she they your anyone someone'),
);
const OPENING_FILLERS = new Set(splitWords('so and but also ok okay hi hello hey well oh'));
const HYPOTHETICAL_WORDS = new Set([
  ...['suppose', 'supposing', 'imagine', 'imagining', 'pretend', 'pretending', 'hypothetically'],
  ...['hypothetical', 'assuming', 'wish', 'maybe', 'perhaps', 'unless', 'roleplay', 'dream'],
  // hedges: the user is not sure, so neither are we
  ...['probably', 'possibly', 'guess', 'apparently', 'supposedly'],
]);
const MODALS = new Set(['would', 'could', 'might', 'may', 'should']);
/** "I'd like", "I would prefer": polite wishes, not conditionals. */
const WISH_VERBS = new Set(['like', 'prefer', 'love', 'appreciate']);
/** "if possible", "if you can": conditions on a request, not a hypothetical. */
const HARMLESS_AFTER_IF = new Set(['possible', 'you', 'needed', 'necessary']);
const NEGATIONS = new Set(splitWords('not no never nobody nothing neither nor hardly anymore cannot'));

/**
 * Splits text into sentences. Fenced code blocks and quoted lines (`> ...`) are skipped, since what
 * they say is not the user speaking; every line break ends a sentence.
 */
export function splitIntoSentences(text: string): string[] {
  const sentences: string[] = [];
  let inFence = false;
  const lines = text.includes('\n') || text.includes('\r') ? text.split(/\r\n|\r|\n/) : [text];
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed.startsWith('```')) {
      inFence = !inFence;
      continue;
    }
    if (inFence || trimmed.startsWith('>') || trimmed === '') continue;
    splitLine(trimmed, sentences);
  }
  return sentences;
}

function splitLine(line: string, into: string[]): void {
  let start = 0;
  for (const run of line.matchAll(SENTENCE_ENDS)) {
    const end = run.index + run[0].length;
    if (end < line.length && !/\s/.test(line[end])) continue; // "3.5", "e.g.x": not the end of a sentence
    pushSentence(line.slice(start, end), into);
    start = end;
  }
  pushSentence(line.slice(start), into);
}

/**
 * A run of white space that is not one plain space: collapsing only these gives what collapsing every
 * run gives, without making a new string for a sentence whose words are one space apart.
 */
const SPACE_TO_COLLAPSE = / \s+|[^\S ]\s*/g;

function pushSentence(raw: string, into: string[]): void {
  const sentence = raw.replace(SPACE_TO_COLLAPSE, ' ').trim();
  if (sentence !== '') into.push(sentence);
}

/** Text without a character beyond ASCII: its letters and digits are a-z and 0-9 once lower-cased. */
const ASCII_ONLY = /^[\u0000-\u007f]*$/; // eslint-disable-line no-control-regex -- every ASCII character is the point

export function lowerCaseWords(text: string): string[] {
  const lower = text.toLowerCase();
  if (ASCII_ONLY.test(lower)) return lower.match(/[a-z0-9'-]+/g) ?? [];
  return lower.replace(/’/g, "'").match(/[\p{L}\p{M}\p{N}'-]+/gu) ?? [];
}

export function analyseSentence(original: string): AnalysedSentence {
  const text = original.replace(/’/g, "'");
  const words = lowerCaseWords(text);
  const opening = words.slice(firstNonFiller(words));
  const isPoliteRequest = isPolitePhrase(opening);
  const isQuestion =
    QUESTION_END.has(text[text.length - 1]) ||
    WH_WORDS.has(opening[0]) ||
    (AUXILIARIES.has(opening[0]) && QUESTION_SUBJECTS.has(opening[1]));
  return { original, text, words, isQuestion, isPoliteRequest, isHypothetical: isHypothetical(words) };
}

function firstNonFiller(words: string[]): number {
  let index = 0;
  while (index < words.length && OPENING_FILLERS.has(words[index])) index++;
  return index;
}

function isPolitePhrase(opening: string[]): boolean {
  const rest = opening[0] === 'please' ? opening.slice(1) : opening;
  return ['can', 'could', 'would', 'will'].includes(rest[0]) && rest[1] === 'you';
}

function isHypothetical(words: string[]): boolean {
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (HYPOTHETICAL_WORDS.has(word)) return true;
    if (word === 'if' && !HARMLESS_AFTER_IF.has(words[i + 1])) return true;
    if ((word === "let's" || word === 'lets') && words[i + 1] === 'say') return true;
    if (word === "i'd" && !WISH_VERBS.has(words[i + 1])) return true;
    if (word === 'i' && MODALS.has(words[i + 1]) && !WISH_VERBS.has(words[i + 2])) return true;
    if (word === 'i' && words[i + 1] === 'think') return true;
  }
  return false;
}

export function isNegation(word: string): boolean {
  return NEGATIONS.has(word) || word.endsWith("n't");
}

const CLAUSE_BOUNDARY = /[,;:()—–"“”«»]|\b(?:but|and|so|because|although|though|while|whereas)\b/giu;

/** Where the clause containing `index` starts. */
export function clauseStart(text: string, index: number): number {
  let start = 0;
  for (const match of text.slice(0, index).matchAll(CLAUSE_BOUNDARY)) start = match.index + match[0].length;
  return start;
}

/** Where the clause containing `index` ends. */
export function clauseEnd(text: string, index: number): number {
  const boundary = new RegExp(CLAUSE_BOUNDARY.source, 'iuy');
  for (let i = index; i < text.length; i++) {
    boundary.lastIndex = i;
    if (boundary.test(text)) return i;
  }
  return text.length;
}

/** Phrases that may open a request without changing it ("please", "could you", "from now on"). */
const REQUEST_LEADS = [
  ...[
    'i would prefer if you',
    "i'd prefer if you",
    'i would like you to',
    "i'd like you to",
    'i want you to',
  ],
  ...['i need you to', "i'd prefer you to", 'i prefer you to', 'i prefer that you', 'i prefer if you'],
  ...['by the way', 'from now on', 'going forward', 'in the future', 'in future', 'in general', 'thank you'],
  ...['can you', 'could you', 'would you', 'will you', 'try to', 'you should', 'you can', 'you could'],
  ...['you may', 'make sure to', 'remember to', 'feel free to', 'please', 'kindly', 'just', 'also', 'and'],
  ...['so', 'now', 'ok', 'okay', 'hi', 'hello', 'hey', 'thanks', 'btw', 'always', 'generally', 'then'],
];

/** True when the words before a request, in its clause, are only polite lead-ins. */
export function isRequestLead(prefix: string): boolean {
  let rest = lowerCaseWords(prefix).join(' ');
  for (let changed = true; changed && rest !== '';) {
    changed = false;
    for (const lead of REQUEST_LEADS) {
      if (rest === lead || rest.startsWith(`${lead} `)) {
        rest = rest.slice(lead.length).trimStart();
        changed = true;
      }
    }
  }
  return rest === '';
}
