/** Word lists of the heuristic extractor, lower case. */

/** `'a b  c'` -> `['a', 'b', 'c']`: keeps long word lists readable. */
export function splitWords(list: string): string[] {
  return list.split(/\s+/).filter((word) => word !== '');
}

const ENGLISH_LANGUAGE_NAMES = splitWords(`
  Arabic Bengali Bulgarian Cantonese Catalan Chinese Croatian Czech Danish Dutch English Estonian Finnish
  French German Greek Hebrew Hindi Hungarian Icelandic Indonesian Italian Japanese Korean Latvian Lithuanian
  Malay Mandarin Norwegian Persian Polish Portuguese Romanian Russian Serbian Slovak Slovenian Spanish Swahili
  Swedish Tagalog Tamil Thai Turkish Ukrainian Urdu Vietnamese Welsh
`);

/** Language names (English ones and a few endonyms) mapped to the English name stored as the value. */
export const LANGUAGE_NAMES: ReadonlyMap<string, string> = new Map([
  ...ENGLISH_LANGUAGE_NAMES.map((name): [string, string] => [name.toLowerCase(), name]),
  ...Object.entries({
    deutsch: 'German',
    español: 'Spanish',
    espanol: 'Spanish',
    français: 'French',
    francais: 'French',
    italiano: 'Italian',
    português: 'Portuguese',
    nederlands: 'Dutch',
    polski: 'Polish',
    svenska: 'Swedish',
    farsi: 'Persian',
  }),
]);

/** Capitalised words that follow "I'm" without being a name: nationalities, faiths, moods. */
export const NOT_A_NAME = new Set([
  ...LANGUAGE_NAMES.keys(),
  ...splitWords(`
    american australian austrian belgian brazilian british canadian egyptian european filipino indian iranian
    irish israeli mexican nigerian pakistani scottish swiss buddhist catholic christian hindu jewish muslim
    back done fine glad good great happy here home okay ok ready sorry sure tired
    not so very just still also really a an the in on at from with
  `),
]);

/** Words that start no value worth storing: pronouns, determiners, vague words. */
export const NON_CONTENT_START = new Set(
  splitWords(`
    it this that these those them him her you your yours me myself something anything everything nothing
    stuff things not no never what how when why which who whatever
  `),
);

/** Words which, before "I" or "my" at a sentence's start, do not change whom it is about. */
export const SENTENCE_LEAD_WORDS = new Set(
  splitWords(`
    also actually and anyway btw but currently earlier fyi hello hey hi honestly lately nowadays now oh ok okay
    personally recently so today tonight well yesterday last this next week weekend month year morning evening
    night ago few couple of years months weeks days since in on the by way
    monday tuesday wednesday thursday friday saturday sunday
  `),
);

/** Nouns after "my" that make a sentence about the user's own life. ("name" is left to the trait.) */
export const PERSONAL_NOUNS = new Set(
  splitWords(`
    age apartment aunt baby birthday boss boyfriend brother brothers cat cats child children colleague
    colleagues company cousin coworker coworkers dad daughter daughters degree diet doctor dog dogs family father
    flat friend friends girlfriend grandfather grandma grandmother grandpa hometown house husband job kid kids
    manager mom mother mum parents partner pet pets sister sisters son sons spouse team uncle wife
  `),
);

/** Nouns after "my" that introduce a preference ("my favourite food is ..."). */
export const PREFERENCE_NOUNS = new Set(splitWords('favourite favorite hobby hobbies interests'));
/** Nouns after "my" that introduce the user's current situation. */
export const CONTEXT_NOUNS = new Set(splitWords('goal goals plan plans project thesis startup'));

/** Words that mark a sentence as about something that happened, or is scheduled. */
export const TIME_MARKERS = new Set(splitWords('yesterday ago last recently tomorrow tonight earlier next'));

/** Memories that touch these are lasting and personal, so they weigh more. */
export const HIGH_IMPORTANCE_WORDS = new Set(
  splitWords(
    'allergic allergy born children daughter diabetic divorced husband kids married medication pregnant son wife',
  ),
);
