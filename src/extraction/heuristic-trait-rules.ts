import { splitWords } from './heuristic-lexicon';
import {
  AnalysedSentence,
  clauseEnd,
  clauseStart,
  isNegation,
  isRequestLead,
  lowerCaseWords,
} from './heuristic-sentences';
import {
  ValueReader,
  readGoal,
  readLanguage,
  readName,
  readOccupation,
  readPlace,
  readStandaloneName,
  readTimeZone,
  readTopicList,
} from './heuristic-value-readers';

/**
 * - `statement`: the user says something about themselves ("I live in ..."). Not in questions or
 *   hypotheticals, not after a negation or a reporting verb in the same clause.
 * - `request`: the user asks the assistant for something ("keep it short"). Allowed in polite
 *   questions ("could you ...?"), but only after polite lead-ins, so "the email should be formal"
 *   or "don't keep it short" do not count.
 */
type Voice = 'statement' | 'request';

export interface TraitRule {
  key: string;
  voice: Voice;
  confidence: number;
  anchors: readonly string[];
  /** The value is read from the capture group, if any, else from the text after the match. */
  trigger: RegExp;
  read: ValueReader;
  /** For weak rules: only when nothing but a greeting precedes the trigger in the sentence. */
  greetingOnlyBefore: boolean;
}

export interface TraitMatch {
  key: string;
  value: unknown;
  confidence: number;
}

const I_AM = "i(?:'m| am)";

function fromMap(values: Record<string, string>): ValueReader {
  const lookup = new Map(Object.entries(values));
  return (word) => lookup.get(word.toLowerCase());
}

const STYLE_WORDS: Record<string, string> = {
  formal: 'formal',
  formally: 'formal',
  professional: 'formal',
  professionally: 'formal',
  casual: 'casual',
  casually: 'casual',
  informal: 'casual',
  informally: 'casual',
  relaxed: 'casual',
  friendly: 'friendly',
  direct: 'direct',
  directly: 'direct',
  blunt: 'direct',
  straightforward: 'direct',
  technical: 'technical',
  technically: 'technical',
};
const STYLE = Object.keys(STYLE_WORDS).join('|');

const DETAIL_WORDS: Record<string, string> = {
  short: 'brief',
  shorter: 'brief',
  brief: 'brief',
  concise: 'brief',
  succinct: 'brief',
  detailed: 'detailed',
  'in-depth': 'detailed',
  'in depth': 'detailed',
  thorough: 'detailed',
  comprehensive: 'detailed',
  long: 'detailed',
  longer: 'detailed',
  lengthy: 'detailed',
  'step-by-step': 'detailed',
};
const ANSWERS = '(?:answers|responses|replies|explanations)';

const EXPERTISE_WORDS: Record<string, string> = {
  beginner: 'beginner',
  novice: 'beginner',
  newbie: 'beginner',
  newcomer: 'beginner',
  intermediate: 'intermediate',
  advanced: 'advanced',
  experienced: 'advanced',
  seasoned: 'advanced',
  expert: 'expert',
  specialist: 'expert',
};

function levelFromYears(years: string): string {
  const count = Number(years);
  if (count < 2) return 'beginner';
  return count < 10 ? 'intermediate' : 'advanced';
}

const constant =
  (value: string): ValueReader =>
  () =>
    value;

/**
 * One rule. `anchors`: words (as `lowerCaseWords` gives them) of which the sentence must contain one
 * for the trigger to be tried at all; this keeps long texts fast. `trigger` becomes a global,
 * case-insensitive, unicode regex.
 */
function rule(
  key: string,
  voice: Voice,
  confidence: number,
  anchors: string,
  trigger: string,
  read: ValueReader,
  greetingOnlyBefore = false,
): TraitRule {
  return {
    key,
    voice,
    confidence,
    anchors: anchors.split(' '),
    trigger: new RegExp(trigger, 'giu'),
    read,
    greetingOnlyBefore,
  };
}

const STYLE_LEAD = '(?:be|stay|sound|keep it|keep things)(?: more| very| a bit more| a little more| extra)?';
const TONE_LEAD = "(?:use|i prefer|i want|i like|i'd like|i would like)(?: a| an)?(?: more)?";
const DETAIL_LEAD = "(?:i prefer|i like|i want|i'd like|i would like|i need|give me)(?: more)?";
const DETAIL = Object.keys(DETAIL_WORDS).join('|');
const I_AM_ANCHORS = "i'm am";

export const TRAIT_RULES: readonly TraitRule[] = [
  rule('name', 'statement', 0.9, "name name's", String.raw`\bmy name(?: is|'s)\s+`, (after) =>
    readName(after, true),
  ),
  rule('name', 'statement', 0.85, 'by', String.raw`\bi go by\s+`, (after) => readName(after, false)),
  rule('name', 'request', 0.85, 'call', String.raw`\bcall me\s+`, (after) => readName(after, false)),
  rule('name', 'statement', 0.6, I_AM_ANCHORS, String.raw`\b${I_AM}\s+`, readStandaloneName, true),

  // "I speak French" says what the user can read, not what they want answers in: no trait.
  rule(
    'preferred_language',
    'request',
    0.9,
    'answer reply respond write talk speak communicate',
    String.raw`\b(?:answer|reply|respond|write|talk|speak|communicate)(?: to me| back)?(?: only)? in\s+`,
    readLanguage,
  ),
  rule(
    'preferred_language',
    'statement',
    0.9,
    'answers replies responses',
    String.raw`\bi(?: prefer| want| need| would like|'d like) (?:your )?(?:answers|replies|responses)(?: to be)? in\s+`,
    readLanguage,
  ),
  rule(
    'preferred_language',
    'statement',
    0.9,
    'preferred',
    String.raw`\bmy preferred language is\s+`,
    readLanguage,
  ),
  rule(
    'preferred_language',
    'statement',
    0.8,
    'prefer',
    String.raw`\bi prefer(?: to (?:speak|talk|write|chat|communicate))?(?: in)?\s+`,
    readLanguage,
  ),

  // Where the user is from, or travels to, is not where they live: only "live", "based" and the like.
  rule('timezone', 'statement', 0.95, 'zone timezone', String.raw`\bmy time ?zone is\s+`, readTimeZone),
  rule(
    'timezone',
    'statement',
    0.85,
    I_AM_ANCHORS,
    String.raw`\b${I_AM} (?:in|on|using)(?: the)?\s+`,
    readTimeZone,
  ),
  rule(
    'location',
    'statement',
    0.9,
    'live reside',
    String.raw`\bi (?:currently |now |still )?(?:live|reside) in\s+`,
    readPlace,
  ),
  rule(
    'location',
    'statement',
    0.9,
    I_AM_ANCHORS,
    String.raw`\b${I_AM} (?:currently |now )?(?:based|located|living) in\s+`,
    readPlace,
  ),
  rule(
    'location',
    'statement',
    0.9,
    'moved relocated',
    String.raw`\bi(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) (?:back )?to\s+`,
    readPlace,
  ),

  rule(
    'occupation',
    'statement',
    0.85,
    'work employed',
    // "and work as" continues a sentence of the user's ("I live in Lisbon and work as ...")
    String.raw`\b(?:i|and) (?:currently |now |still )?(?:work|am employed) as\s+`,
    readOccupation,
  ),
  rule(
    'employer',
    'statement',
    0.85,
    'work joined',
    String.raw`\bi (?:currently |now |still )?work (?:at|for)\s+|\bi(?:'ve| have)? (?:just |recently )?joined\s+`,
    readPlace,
  ),

  rule(
    'communication_style',
    'request',
    0.85,
    'be stay sound keep',
    String.raw`\b${STYLE_LEAD} (${STYLE})\b`,
    fromMap(STYLE_WORDS),
  ),
  rule(
    'occupation',
    'statement',
    0.85,
    'work employed',
    // "and work as" continues a sentence of the user's ("I live in Lisbon and work as ...")
    String.raw`\b(?:i|and) (?:currently |now |still )?(?:work|am employed) as\s+`,
    readOccupation,
  ),
  rule(
    'employer',
    'statement',
    0.85,
    'work joined',
    String.raw`\bi (?:currently |now |still )?work (?:at|for)\s+|\bi(?:'ve| have)? (?:just |recently )?joined\s+`,
    readPlace,
  ),

  rule(
    'communication_style',
    'request',
    0.85,
    'tone style register voice language',
    String.raw`\b${TONE_LEAD} (${STYLE}) (?:tone|style|register|voice|language)\b`,
    fromMap(STYLE_WORDS),
  ),
  rule(
    'occupation',
    'statement',
    0.85,
    'work employed',
    // "and work as" continues a sentence of the user's ("I live in Lisbon and work as ...")
    String.raw`\b(?:i|and) (?:currently |now |still )?(?:work|am employed) as\s+`,
    readOccupation,
  ),
  rule(
    'employer',
    'statement',
    0.85,
    'work joined',
    String.raw`\bi (?:currently |now |still )?work (?:at|for)\s+|\bi(?:'ve| have)? (?:just |recently )?joined\s+`,
    readPlace,
  ),

  rule(
    'communication_style',
    'request',
    0.8,
    'speak talk write answer reply respond',
    String.raw`\b(?:speak|talk|write|answer|reply|respond)(?: to me)? (${STYLE})\b`,
    fromMap(STYLE_WORDS),
  ),
  rule(
    'occupation',
    'statement',
    0.85,
    'work employed',
    // "and work as" continues a sentence of the user's ("I live in Lisbon and work as ...")
    String.raw`\b(?:i|and) (?:currently |now |still )?(?:work|am employed) as\s+`,
    readOccupation,
  ),
  rule(
    'employer',
    'statement',
    0.85,
    'work joined',
    String.raw`\bi (?:currently |now |still )?work (?:at|for)\s+|\bi(?:'ve| have)? (?:just |recently )?joined\s+`,
    readPlace,
  ),

  rule(
    'communication_style',
    'request',
    0.7,
    'point',
    String.raw`\b(?:get|go|cut) (?:straight |right )?to the point\b`,
    constant('direct'),
  ),

  // "balanced" is never guessed: nobody states it plainly enough.
  rule(
    'detail_preference',
    'request',
    0.8,
    'keep make',
    String.raw`\b(?:keep|make) (?:it|things|this|them|${ANSWERS}|your ${ANSWERS})(?: very| really| fairly| pretty)? (short|brief|concise|succinct)\b`,
    fromMap(DETAIL_WORDS),
  ),
  rule(
    'detail_preference',
    'request',
    0.85,
    'be',
    String.raw`\bbe (?:more |very )?(brief|concise|succinct|detailed|thorough)\b`,
    fromMap(DETAIL_WORDS),
  ),
  rule(
    'detail_preference',
    'request',
    0.85,
    'answers responses replies explanations',
    String.raw`\b${DETAIL_LEAD} (${DETAIL}) ${ANSWERS}\b`,
    fromMap(DETAIL_WORDS),
  ),
  rule(
    'detail_preference',
    'request',
    0.8,
    'please',
    String.raw`\b(short|brief|concise|detailed) ${ANSWERS},? please\b`,
    fromMap(DETAIL_WORDS),
  ),
  rule(
    'detail_preference',
    'request',
    0.75,
    'detail',
    String.raw`\b(?:explain|describe) (?:things|everything) in (?:great |full |more )?detail\b`,
    constant('detailed'),
  ),

  rule(
    'expertise_level',
    'statement',
    0.9,
    I_AM_ANCHORS,
    String.raw`\b${I_AM}(?: just| only| still)? (?:a |an )?(?:complete |total |absolute |real )?(beginner|novice|newbie|newcomer|intermediate)\b(?! (?:in|at|on|with|of)\b)`,
    fromMap(EXPERTISE_WORDS),
  ),
  rule(
    'expertise_level',
    'statement',
    0.85,
    'new',
    String.raw`\b${I_AM}(?: quite| fairly| very| completely| totally| pretty)? new to\b`,
    constant('beginner'),
  ),
  rule(
    'expertise_level',
    'statement',
    0.75,
    'learning learn',
    String.raw`\bi(?:'ve| have)? (?:just |only )?(?:started|begun|began) (?:learning|to learn)\b`,
    constant('beginner'),
  ),
  rule(
    'expertise_level',
    'statement',
    0.75,
    'experience',
    String.raw`\bi have (?:no|zero|little) (?:prior )?experience (?:with|in)\b`,
    constant('beginner'),
  ),
  rule(
    'expertise_level',
    'statement',
    0.6,
    'experience',
    String.raw`\bi have some experience (?:with|in)\b`,
    constant('intermediate'),
  ),
  rule(
    'expertise_level',
    'statement',
    0.8,
    I_AM_ANCHORS,
    String.raw`\b${I_AM} (?:a |an )?(?:very |quite |highly )?(advanced|experienced|seasoned)\b`,
    fromMap(EXPERTISE_WORDS),
  ),
  rule(
    'expertise_level',
    'statement',
    0.7,
    'senior staff principal lead',
    String.raw`\b${I_AM} (?:a |an )?(?:senior|staff|principal|lead) (?:\p{L}+ )?(?:engineer|developer|programmer|architect|scientist|analyst|designer|consultant)\b`,
    constant('advanced'),
  ),
  rule(
    'expertise_level',
    'statement',
    0.85,
    'expert specialist',
    String.raw`\b${I_AM} (?:a |an )?(?:domain |subject matter |recognised |recognized |real )?(expert|specialist)\b(?! (?:in|at|on|with|of)\b)`,
    fromMap(EXPERTISE_WORDS),
  ),
  rule(
    'expertise_level',
    'statement',
    0.6,
    'experience',
    String.raw`\bi have (\d{1,2})\+? years? of (?:professional |industry |work )?experience\b`,
    levelFromYears,
  ),

  // "I like ..." is left out: it is said of everything from food to the last answer.
  rule(
    'interests',
    'statement',
    0.9,
    'hobbies hobby interests passion passions',
    String.raw`\bmy (?:hobbies|hobby|interests|passions?) (?:are|is|include)\s+`,
    readTopicList,
  ),
  rule(
    'interests',
    'statement',
    0.8,
    I_AM_ANCHORS,
    String.raw`\b${I_AM} (?:really |very |also |quite |deeply |so )?(?:interested in|into|passionate about|fascinated by|a (?:big |huge )?fan of)\s+`,
    readTopicList,
  ),
  rule(
    'interests',
    'statement',
    0.75,
    'love enjoy adore',
    String.raw`\bi (?:really |absolutely |also |just )?(?:love|enjoy|adore)\s+`,
    readTopicList,
  ),

  rule(
    'current_goals',
    'statement',
    0.9,
    'goal goals',
    String.raw`\bmy (?:main |current |big |biggest )?goals? (?:is|are)\s+`,
    readGoal,
  ),
  rule(
    'current_goals',
    'statement',
    0.8,
    'trying',
    String.raw`\b${I_AM} (?:currently |really |still )?trying to\s+`,
    readGoal,
  ),
  rule(
    'current_goals',
    'statement',
    0.75,
    'working preparing planning',
    String.raw`\b${I_AM} (?:currently |now )?(?:working on|preparing for|planning to)\s+`,
    readGoal,
  ),
  rule(
    'current_goals',
    'statement',
    0.7,
    'plan intend aim',
    String.raw`\bi (?:plan|intend|aim) to\s+`,
    readGoal,
  ),
  rule('current_goals', 'statement', 0.6, 'want', String.raw`\bi (?:really )?want to\s+`, readGoal),
];

/** Words that, before "I ..." in the same clause, make it someone else's claim or a condition. */
const REPORTING_WORDS = new Set(
  splitWords(`
    said says say thinks think thought believe believes told tells claims claim assume assumes knows
    know guess wonder whether that than when once before after until pretend as
  `),
);
const NO_LONGER = /\b(?:anymore|any more|no longer|not anymore)\b/iu;
const QUOTE = /["“”«»„]/u;
const GREETINGS = new Set(splitWords('hi hello hey hiya greetings well ok okay so oh yes'));
const MAX_STATEMENT_PREFIX_WORDS = 4;

/** For each anchor word, the positions in TRAIT_RULES of the rules it lets be tried. */
const RULES_BY_ANCHOR = new Map<string, number[]>();
TRAIT_RULES.forEach((rule, position) => {
  for (const anchor of rule.anchors) {
    const positions = RULES_BY_ANCHOR.get(anchor) ?? [];
    if (!positions.includes(position)) positions.push(position);
    RULES_BY_ANCHOR.set(anchor, positions);
  }
});

/** The positions, in order, of the rules with an anchor among `words`. */
function anchoredRules(words: readonly string[]): number[] {
  const positions: number[] = [];
  for (const word of words) {
    const anchored = RULES_BY_ANCHOR.get(word);
    if (anchored === undefined) continue;
    for (const position of anchored) if (!positions.includes(position)) positions.push(position);
  }
  return positions.sort((a, b) => a - b);
}

/** The traits one sentence states, per the rules whose key is in `keys`. */
export function matchTraitRules(sentence: AnalysedSentence, keys: ReadonlySet<string>): TraitMatch[] {
  if (sentence.isHypothetical) return [];
  const matches: TraitMatch[] = [];
  for (const position of anchoredRules(sentence.words)) {
    const rule = TRAIT_RULES[position];
    if (!keys.has(rule.key)) continue;
    if (sentence.isQuestion && !(rule.voice === 'request' && sentence.isPoliteRequest)) continue;
    for (const match of sentence.text.matchAll(rule.trigger)) {
      if (!isInContext(sentence.text, match.index, match.index + match[0].length, rule)) continue;
      const value = rule.read(match[1] ?? sentence.text.slice(match.index + match[0].length));
      if (value !== undefined) matches.push({ key: rule.key, value, confidence: rule.confidence });
    }
  }
  return matches;
}

function isInContext(text: string, start: number, end: number, rule: TraitRule): boolean {
  const clausePrefix = text.slice(clauseStart(text, start), start);
  if (rule.voice === 'request') return isRequestLead(clausePrefix);
  if (QUOTE.test(text.slice(0, start))) return false;
  if (rule.greetingOnlyBefore && !lowerCaseWords(text.slice(0, start)).every((w) => GREETINGS.has(w))) {
    return false;
  }
  const prefixWords = lowerCaseWords(clausePrefix);
  if (prefixWords.length > MAX_STATEMENT_PREFIX_WORDS) return false;
  if (prefixWords.some((word) => isNegation(word) || REPORTING_WORDS.has(word))) return false;
  return !NO_LONGER.test(text.slice(end, clauseEnd(text, end)));
}
