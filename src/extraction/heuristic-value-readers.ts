import { LANGUAGE_NAMES, NON_CONTENT_START, NOT_A_NAME, splitWords } from './heuristic-lexicon';

/** Reads a trait value from the text that follows a rule's trigger; undefined when there is none. */
export type ValueReader = (after: string) => unknown;

interface Token {
  text: string;
  isWord: boolean;
}

const TOKEN = /[\p{L}\p{M}\p{N}'’.-]+|[^\s\p{L}\p{M}\p{N}'’.-]/gu;
const MAX_NAME_WORDS = 3;
const MAX_PLACE_WORDS = 4;
const MAX_LIST_ITEMS = 10;
const MAX_ITEM_WORDS = 5;
const MAX_GOAL_WORDS = 12;
const MAX_PHRASE_LENGTH = 120;

/** The first tokens of `text`: words (trailing dots dropped) and single punctuation marks. */
function leadingTokens(text: string, max: number): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null && tokens.length < max; match = TOKEN.exec(text)) {
    const word = match[0].replace(/\.+$/, '');
    if (word === '') tokens.push({ text: '.', isWord: false });
    else tokens.push({ text: word, isWord: /[\p{L}\p{N}]/u.test(word) });
    if (word !== match[0]) tokens.push({ text: '.', isWord: false });
  }
  return tokens;
}

function isCapitalised(word: string): boolean {
  return /^\p{Lu}/u.test(word);
}

const AFTER_LOWER_CASE_NAME = new Set(['and', 'but', 'from', 'i', "i'm", 'here']);
const AFTER_STANDALONE_NAME = new Set(['and', 'from', 'here']);

/**
 * "Anna" or "Anna Maria Lopez" (capitalised words). When `allowLowerCase`, also "anna", but only one
 * word that ends the clause: "my name is kind of long" must not give "kind".
 */
export function readName(after: string, allowLowerCase: boolean): string | undefined {
  const tokens = leadingTokens(after, MAX_NAME_WORDS + 1);
  const first = tokens[0];
  if (first?.isWord !== true || !/^\p{L}/u.test(first.text) || isNonName(first.text)) return undefined;
  if (!isCapitalised(first.text)) {
    const next = tokens[1];
    const endsClause =
      next === undefined || !next.isWord || AFTER_LOWER_CASE_NAME.has(next.text.toLowerCase());
    return allowLowerCase && endsClause ? first.text : undefined;
  }
  const words = [first.text];
  for (const token of tokens.slice(1, MAX_NAME_WORDS)) {
    if (!token.isWord || !isCapitalised(token.text) || isNonName(token.text)) break;
    words.push(token.text);
  }
  return words.join(' ');
}

function isNonName(word: string): boolean {
  const lower = word.toLowerCase();
  return NOT_A_NAME.has(lower) || NON_CONTENT_START.has(lower) || isFirstPerson(word);
}

/** A name only when nothing but punctuation, "and", "from" or "here" follows it: "I'm Anna, ...". */
export function readStandaloneName(after: string): string | undefined {
  const name = readName(after, false);
  if (name === undefined) return undefined;
  const next = leadingTokens(after, MAX_NAME_WORDS + 2)[name.split(' ').length];
  if (next === undefined || !next.isWord) return name;
  return AFTER_STANDALONE_NAME.has(next.text.toLowerCase()) ? name : undefined;
}

const AFTER_LANGUAGE = new Set(splitWords('please from if only going over instead rather and when'));

/** A known language name, as its English name, standing on its own ("German", not "German food"). */
export function readLanguage(after: string): string | undefined {
  const [first, next] = leadingTokens(after, 2);
  const language = first?.isWord === true ? LANGUAGE_NAMES.get(first.text.toLowerCase()) : undefined;
  if (language === undefined) return undefined;
  return next === undefined || !next.isWord || AFTER_LANGUAGE.has(next.text.toLowerCase())
    ? language
    : undefined;
}

const TIME_ZONE_ABBREVIATIONS = new Set(
  splitWords(`
    UTC GMT CET CEST EET EEST WET WEST BST IST PST PDT MST MDT CST CDT EST EDT AKST HST JST KST AEST
    AEDT ACST AWST NZST NZDT SGT HKT MSK
  `),
);
const UTC_OFFSET = /^(?:UTC|GMT)[+-]\d{1,2}(?::?\d{2})?$/i;
const TIME_ZONE_TOKEN = /^\s*([A-Za-z][\w+/:-]{0,40})/;
const AFTER_TIME_ZONE = /^(?:\s*$|\s*[.,;!)]|\s+(?:time|timezone|time zone|now|currently|and|but)\b)/i;
let ianaTimeZones: Map<string, string> | undefined;

function ianaTimeZoneNamed(name: string): string | undefined {
  ianaTimeZones ??= new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));
  return ianaTimeZones.get(name.toLowerCase());
}

/** An IANA zone ("Europe/Paris"), a common abbreviation ("PST") or a UTC offset ("UTC+2"). */
export function readTimeZone(after: string): string | undefined {
  const match = TIME_ZONE_TOKEN.exec(after);
  if (match === null) return undefined;
  const candidate = match[1].replace(/[.:]+$/, '');
  if (!AFTER_TIME_ZONE.test(after.slice(match[0].length - (match[1].length - candidate.length))))
    return undefined;
  if (candidate.includes('/')) return ianaTimeZoneNamed(candidate);
  if (UTC_OFFSET.test(candidate)) return candidate.toUpperCase();
  return TIME_ZONE_ABBREVIATIONS.has(candidate) ? candidate : undefined;
}

const PLACE_CONNECTORS = new Set(['de', 'del', 'da', 'do', 'of', 'am', 'upon', 'la', 'le', 'sur', 'on']);

/** A capitalised place name: "Berlin", "the Netherlands", "Rio de Janeiro", "Austin, Texas". */
export function readPlace(after: string): string | undefined {
  const tokens = leadingTokens(after, 12);
  let index = 0;
  const article = tokens[0]?.text.toLowerCase() === 'the' ? 'the ' : '';
  if (article !== '') index++;
  const firstPart = readCapitalisedRun(tokens, index);
  if (firstPart === undefined) return undefined;
  index = firstPart.next;
  let place = article + firstPart.words.join(' ');
  if (tokens[index]?.text === ',') {
    const region = readCapitalisedRun(tokens, index + 1, 2);
    if (region !== undefined) place += `, ${region.words.join(' ')}`;
  }
  return place;
}

function readCapitalisedRun(
  tokens: Token[],
  from: number,
  max = MAX_PLACE_WORDS,
): { words: string[]; next: number } | undefined {
  const words: string[] = [];
  let index = from;
  while (index < tokens.length && words.length < max) {
    const token = tokens[index];
    if (
      token.isWord &&
      isCapitalised(token.text) &&
      /^\p{L}/u.test(token.text) &&
      !isFirstPerson(token.text)
    ) {
      words.push(token.text);
      index++;
    } else if (
      words.length > 0 &&
      PLACE_CONNECTORS.has(token.text) &&
      tokens[index + 1]?.isWord === true &&
      isCapitalised(tokens[index + 1].text)
    ) {
      words.push(token.text);
      index++;
    } else {
      break;
    }
  }
  return words.length > 0 ? { words, next: index } : undefined;
}

function isFirstPerson(word: string): boolean {
  const lower = word.toLowerCase().replace(/’/g, "'");
  return lower === 'i' || lower.startsWith("i'");
}

const PHRASE_END =
  /[.;!?:()[\]"“”«»\n]|\s(?:because|but|since|when|especially|though|although|so|which|while|if|whenever)\s/iu;
const LIST_SEPARATOR = /\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|as well as|&)\s+/iu;
const FILLER_ENDINGS = /\s+(?:too|a lot|very much|so much|as well)$/i;
/** When the user does it is not what they are interested in: "hiking on weekends" is hiking. */
const WHEN_ENDINGS =
  /\s+(?:on|at|during|over|in the|every|most|at the)\s+(?:weekends?|weekdays|evenings?|mornings?|nights?|summers?|winters?|holidays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|day|week|the weekend)$/i;
const POSSESSIVES = new Set(['my', 'your', 'his', 'her', 'our', 'their']);
const SECOND_PERSON = /\b(?:you|your|yours|yourself)\b/i;

/** "hiking, chess and music" -> ["hiking", "chess", "music"]; items that are not topics are left out. */
export function readTopicList(after: string): string[] | undefined {
  const phrase = cutAt(after, PHRASE_END);
  const items = phrase
    .split(LIST_SEPARATOR)
    .map((item) =>
      item
        .trim()
        .replace(FILLER_ENDINGS, '')
        .replace(WHEN_ENDINGS, '')
        .replace(/^to\s+/i, ''),
    )
    .filter((item) => isTopic(item))
    .slice(0, MAX_LIST_ITEMS);
  return items.length > 0 ? items : undefined;
}

function isTopic(item: string): boolean {
  const words = item.split(/\s+/);
  const first = words[0].toLowerCase();
  return (
    item !== '' &&
    words.length <= MAX_ITEM_WORDS &&
    item.length <= MAX_PHRASE_LENGTH &&
    /\p{L}/u.test(item) &&
    !NON_CONTENT_START.has(first) &&
    !POSSESSIVES.has(first) &&
    !SECOND_PERSON.test(item)
  );
}

const GOAL_END = /[.;!?:,()[\]"“”«»\n]|\s(?:because|but|so that|since|and i|and my|which|while|if|so i)\s/iu;
/** Verbs that make "I want to ..." part of the conversation, not a goal ("I want to ask ..."). */
export const CONVERSATIONAL_VERBS = new Set(
  splitWords(`
    know ask say see check understand thank mention clarify confirm talk tell add share hear note
    discuss show give explain remember figure point be double-check follow reply answer continue
  `),
);

/** "build a website" from "build a website because ..."; one goal, not split on "and". */
/** A job title: "data engineer" from "a data engineer at Acme since 2020" (at most four words). */
export function readOccupation(after: string): string | undefined {
  const words = cutAt(after, PHRASE_END)
    .replace(/^(?:an?|the)\s+/i, '')
    .split(/\s+(?:at|for|in|with|since|and|but|who|which|because|from)\s+/i)[0]
    .trim()
    .split(/\s+/);
  if (words.length === 0 || words.length > 4 || !words.every((word) => /^[\p{L}-]+$/u.test(word)))
    return undefined;
  return words.join(' ');
}

export function readGoal(after: string): string[] | undefined {
  const goal = cutAt(after, GOAL_END)
    .trim()
    .replace(/^to\s+/i, '');
  const words = goal.split(/\s+/);
  const first = words[0].toLowerCase();
  if (
    goal === '' ||
    words.length > MAX_GOAL_WORDS ||
    goal.length > MAX_PHRASE_LENGTH ||
    NON_CONTENT_START.has(first) ||
    CONVERSATIONAL_VERBS.has(first) ||
    /^make sure\b/i.test(goal) ||
    SECOND_PERSON.test(goal)
  ) {
    return undefined;
  }
  return [goal];
}

function cutAt(text: string, end: RegExp): string {
  const match = end.exec(text);
  return (match === null ? text : text.slice(0, match.index)).trim();
}
