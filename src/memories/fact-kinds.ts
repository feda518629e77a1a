/**
 * Single-valued facts about the user: a newer statement of the same kind replaces the older one (it
 * supersedes it), where other memories simply add up. Each rule reads a first-person sentence as written
 * and names its kind; a kind may carry what it is about ("likes:surfing"), so that "I no longer like
 * surfing" replaces "I love surfing" and nothing else. The rows of `must` and `mustNot` are checked by
 * the unit tests.
 */
export interface FactKindRule {
  kind: string;
  /** Matches the sentence; a first capture group, when there is one, is what the fact is about. */
  pattern: RegExp;
  must: string[];
  mustNot: string[];
}

const PLACE = String.raw`(?:the )?[A-Z][\w'-]*`;
const LIKING = String.raw`(?:like|love|enjoy|adore)`;

export const FACT_KIND_RULES: FactKindRule[] = [
  {
    kind: 'location',
    pattern: new RegExp(
      String.raw`\bI(?:'m| am)? (?:now |currently |still )?(?:live|living|based|located|settled) in ${PLACE}` +
        String.raw`|\bI(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) (?:back )?to ${PLACE}`,
    ),
    must: [
      'I live in Lisbon',
      "I'm based in Berlin",
      'I moved to Berlin last month',
      'I have just moved to New York',
      'I am now living in Porto',
    ],
    mustNot: [
      'My manager lives in Porto',
      'I moved to a new apartment near the river',
      'I live in a small flat',
      'I would love to live in Paris',
    ],
  },
  {
    kind: 'employer',
    pattern: new RegExp(
      String.raw`\bI (?:now |currently |still )?work (?:at|for) ${PLACE}|\bI(?:'ve| have)? (?:just |recently )?joined ${PLACE}`,
    ),
    must: ['I work at Acme', 'I now work for Globex as a designer', 'I just joined Initech'],
    mustNot: ['I work at home on Fridays', 'My wife works at Acme', 'I work for myself'],
  },
  {
    kind: 'occupation',
    pattern: /\bI (?:now |currently |still )?work as an? \w|\bI(?:'m| am) (?:now )?employed as an? \w/,
    must: ['I work as a data engineer', 'I now work as an architect'],
    mustNot: ['My brother works as a nurse', 'I work at Acme'],
  },
  {
    kind: 'relationship',
    pattern:
      /\bI(?:'m| am) (?:now |happily |recently )?(?:married|single|divorced|engaged|widowed|separated|in a relationship)\b|\bI (?:just )?got (?:married|engaged|divorced)\b/,
    must: ["I'm married", 'I am single again', 'I just got engaged', 'I am in a relationship'],
    mustNot: ['My sister is married', 'I married young, a long time ago'],
  },
  {
    kind: 'diet',
    pattern:
      /\bI(?:'m| am) (?:now |no longer |not )?(?:a )?(?:vegetarian|vegan|pescatarian)\b|\bI (?:don't|do not|no longer|now|still) eat meat\b|\bI eat meat\b/,
    must: ["I'm vegetarian", "I don't eat meat anymore", 'I eat meat again', 'I am now vegan'],
    mustNot: ['My son is vegetarian', 'I eat fish on Fridays'],
  },
  {
    kind: 'likes',
    pattern: new RegExp(
      String.raw`\bI (?:really |still |truly )?${LIKING}s? ([\w' -]+?)(?: (?:anymore|any more|now|again))?[.!]?$` +
        String.raw`|\bI (?:no longer|don't|do not|stopped|don't really) ${LIKING}s? ([\w' -]+?)(?: (?:anymore|any more|now))?[.!]?$`,
    ),
    must: [
      'I love surfing',
      'I no longer like surfing',
      "I don't like long meetings",
      'I really enjoy hiking',
    ],
    mustNot: ['My daughter loves surfing', 'I would like a coffee?'],
  },
];

/** The kind of single-valued fact a first-person sentence states, or null. */
export function factKindOf(sentence: string): string | null {
  for (const rule of FACT_KIND_RULES) {
    const match = rule.pattern.exec(sentence);
    if (!match) continue;
    const about = match.slice(1).find((group) => group !== undefined);
    return about === undefined ? rule.kind : `${rule.kind}:${about.trim().toLowerCase()}`;
  }
  return null;
}

/** Third-person verbs whose first-person form is not the verb without its final s. */
const FIRST_PERSON_VERBS: Record<string, string> = { is: 'am', has: 'have', does: 'do', goes: 'go' };

/**
 * The kind of single-valued fact a memory's content states, however it is worded: as the user said it
 * ("I live in Lisbon"), or as memories are stored ("User lives in Lisbon.", "Lives in Lisbon"). Memories
 * written through the API or by the LLM extractor get their kind from this, as the heuristic rules'
 * memories get it from the sentence they read.
 */
export function factKindOfContent(content: string): string | null {
  const text = content.trim();
  const direct = factKindOf(text);
  if (direct !== null) return direct;
  const match = /^(?:(?:the )?user )?([a-z]+)\b(.*)$/is.exec(text);
  if (!match) return null;
  const verb = match[1].toLowerCase();
  const firstPerson =
    FIRST_PERSON_VERBS[verb] ??
    (/(?:ch|sh|ss|x|z|o)es$/.test(verb)
      ? verb.slice(0, -2)
      : /[^aeiou]ies$/.test(verb)
        ? `${verb.slice(0, -3)}y`
        : /[^s]s$/.test(verb)
          ? verb.slice(0, -1)
          : verb);
  return factKindOf(`I ${firstPerson}${match[2]}`);
}
