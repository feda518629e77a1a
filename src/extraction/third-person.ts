/**
 * A user's first-person sentence rewritten about the user ("I live in Lisbon" -> "User lives in
 * Lisbon"): inside the system message a memory's "I" would read as the assistant. Verbs after "I" are
 * put in the third person (present tense gets its -s, "am" / "have" / "do" their forms; past tense and
 * modals stay), "my" becomes "the user's" at the start and "their" elsewhere, "me" / "myself" / "mine"
 * "them" / "themselves" / "theirs".
 */
export function toThirdPerson(sentence: string): string {
  const tokens = sentence.split(/(\s+)/);
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    const { core, tail } = splitPunctuation(token);
    const lower = core.toLowerCase();
    const first = out.join('').trim() === '';
    if (CONTRACTED[lower]) {
      out.push(`${first ? 'User' : 'the user'} ${CONTRACTED[lower]}${tail}`);
      continue;
    }
    if (core === 'I' || core === 'i') {
      out.push(first ? 'User' : 'the user');
      // the verb after "I", past optional adverbs: "I really love" -> "the user really loves"
      let j = i + 1;
      while (j + 1 < tokens.length) {
        out.push(tokens[j]); // white space
        const word = splitPunctuation(tokens[j + 1]);
        const w = word.core.toLowerCase();
        if (ADVERBS.has(w)) {
          out.push(tokens[j + 1]);
          j += 2;
          continue;
        }
        out.push(conjugate(word.core) + word.tail);
        j += 2;
        break;
      }
      i = j - 1;
      out.push(tail);
      continue;
    }
    if (lower === 'and' && out.some((part) => part === 'User' || part === 'the user')) {
      // a second verb of the user's: "I live in Lisbon and work as ..." -> "... and works as ..."
      const next = splitPunctuation(tokens[i + 2] ?? '');
      if (COMMON_VERBS.has(next.core.toLowerCase())) {
        out.push(token, tokens[i + 1], conjugate(next.core) + next.tail);
        i += 2;
        continue;
      }
    }
    if (lower === 'my') out.push((first ? "User's" : 'their') + tail);
    else if (lower === 'me') out.push(`them${tail}`);
    else if (lower === 'myself') out.push(`themselves${tail}`);
    else if (lower === 'mine') out.push(`theirs${tail}`);
    else out.push(token);
  }
  return out.join('');
}

const CONTRACTED: Record<string, string> = {
  "i'm": 'is',
  "i've": 'has',
  "i'd": 'would',
  "i'll": 'will',
};

const ADVERBS = new Set(
  `really also actually usually always generally currently just still now recently absolutely totally
   definitely honestly mostly often sometimes rarely truly strongly even finally already normally mainly
   never no longer`.split(/\s+/),
);

/** Verbs that, bare after "and" in the user's sentence, are the user's second verb. */
const COMMON_VERBS = new Set(
  `work live love like enjoy have play speak study use prefer own teach run write read cook travel
   hate need want try plan manage lead drive eat drink`.split(/\s+/),
);

const IRREGULAR: Record<string, string> = {
  am: 'is',
  have: 'has',
  do: 'does',
  go: 'goes',
  "don't": "doesn't",
  "haven't": "hasn't",
  "ain't": "isn't",
};

/** Words after "I" that stay as they are: modals, past tenses and forms shared by every person. */
const UNCHANGED = new Set(
  `was were can could will would shall should must might may cannot can't won't wouldn't couldn't
   shouldn't didn't wasn't weren't had did got went came made took saw knew thought said felt left lost
   met ran won began became bought brought caught fought taught sold told found held kept slept spent
   sent built wrote drove ate flew gave grew threw broke spoke chose rode woke forgot`.split(/\s+/),
);

function conjugate(verb: string): string {
  const lower = verb.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower];
  if (UNCHANGED.has(lower) || lower.endsWith('ed') || !/^[a-z]+$/.test(lower)) return verb;
  if (/(s|sh|ch|x|z|o)$/.test(lower)) return `${verb}es`;
  if (/[^aeiou]y$/.test(lower)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

function splitPunctuation(token: string): { core: string; tail: string } {
  const match = /^(.*?)([.,;:!?)"]*)$/s.exec(token)!;
  return { core: match[1], tail: match[2] };
}
