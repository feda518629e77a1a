import { Client } from 'pg';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { DAILY_DECAY_RATE, DECAY_FLOOR } from '../src/memories/memory-decay.service';
import { ServiceProcess } from './service-process';

/**
 * Ranking quality where importance and recency matter (LoCoMo measures relevance only: its memories
 * are equally important and about as old), over a grid of ranking weights. Synthetic, deterministic
 * scenarios, one per profile, each with one right memory:
 *
 * - update: an older and a newer memory about the same attribute, with the same key words ("My
 *   favourite drink is coffee", 30-180 days old; "My favourite drink is green tea now", 0-10 days);
 *   the question asks about the attribute; right = the newer one. Same importance, 6 unrelated others.
 * - importance: two memories that match the question's words equally (same words of the question, same
 *   number of lexemes, so the same full-text rank) and are equally old, one important (0.9, "My sister
 *   Anna is allergic to penicillin"), one trivial (0.2, "... likes salted caramel"); right = the
 *   important one. 6 unrelated others.
 * - relevance-vs-importance: the one memory that answers, of low importance (0.2, 3-30 days old),
 *   among 16 unrelated memories of high importance (0.8-1.0) from the last week.
 * - old-relevant: the one memory that answers, 300-500 days old (importance 0.4-0.7), among 15
 *   unrelated memories of the last three weeks (importance 0.3-0.9).
 * - partial-match: the memory that answers both key words of the question ("my dentist's address",
 *   importance 0.3) among 3 that share only the generic one ("My cousin's address is ...", importance
 *   0.8-1.0, recent) and 12 unrelated.
 *
 * Ages are set with SQL after the memories are created through the API, and the decay the service
 * would have applied over those days (×0.95 a day, floor 0.1) is applied with them, as the service's
 * daily decay job computes it, so that the job has nothing left to do when a service starts. Every
 * question is asked through the proxy (debug header, skipExtraction) on a service started with the
 * weights under test; a chat request marks its injected memories as used, so `last_accessed_at` is
 * reset between runs. hit@1: the right memory is the first injected (the header lists them in rank
 * order); recall: it is injected at all (CONTEXT_MAX_MEMORIES, 10 by default).
 */

export const WEIGHT_FAMILIES = [
  'update',
  'importance',
  'relevance-vs-importance',
  'old-relevant',
  'partial-match',
] as const;
export type WeightFamily = (typeof WEIGHT_FAMILIES)[number];

export interface WeightCombo {
  relevance: number;
  importance: number;
  recency: number;
  halfLifeDays: number;
}

export interface FamilyScore {
  questions: number;
  /** Share of questions whose right memory was injected first. */
  hitAt1: number;
  /** Share of questions whose right memory was injected at all. */
  recall: number;
  /** Mean of 1 / (position of the right memory among the injected), 0 when not injected. */
  mrr: number;
}

export interface WeightsRow {
  weights: WeightCombo;
  /** 'default' for the service's defaults, 'half-life' for the defaults with another half-life. */
  note: 'default' | 'grid' | 'half-life' | 'relevance only';
  families: Record<WeightFamily, FamilyScore>;
  /** Mean over the families of their hit@1 (each family weighs the same). */
  meanHitAt1: number;
  meanRecall: number;
  seconds: number;
}

export interface WeightsReport {
  families: Array<{ name: WeightFamily; instances: number; memoriesPerProfile: number }>;
  memoriesStored: number;
  contextMaxMemories: number;
  /**
   * Checks of the scenarios against the database's own full text: memories meant to be unrelated that
   * share a word with their question, memories meant to match that do not, and importance pairs whose
   * full-text lengths differ (then their relevance would too). All should be 0.
   */
  checks: { unexpectedMatches: number; missingMatches: number; unequalImportancePairs: number };
  rows: WeightsRow[];
  setupSeconds: number;
  seconds: number;
}

const DEFAULTS: WeightCombo = { relevance: 0.6, importance: 0.3, recency: 0.1, halfLifeDays: 30 };
const GRID = {
  relevance: [0.4, 0.6, 0.8],
  importance: [0.1, 0.3, 0.5],
  recency: [0.05, 0.1, 0.2],
};
/** Half-lives tried with the default weights (the grid uses the default, 30 days). */
const HALF_LIVES = [7, 90];
const PROFILE_PREFIX = 'bench-weights-';
const SEED = 20_251_121;
/** Questions in flight at once (each scenario has its own profile, so they do not interfere). */
const CONCURRENCY = 4;
/** Profiles filled at once while storing the scenarios. */
const STORE_CONCURRENCY = 8;

type Role = 'right' | 'rival' | 'partial' | 'other';

interface MemorySeed {
  content: string;
  type: 'fact' | 'preference' | 'event';
  importance: number;
  ageDays: number;
  /** right: the answer; rival, partial: match the question (fully, partly) but are not the answer. */
  role: Role;
}

interface Scenario {
  family: WeightFamily;
  externalId: string;
  question: string;
  memories: MemorySeed[];
}

interface StoredScenario extends Scenario {
  memoryIds: string[];
  rightId: string;
}

/**
 * Builds the scenarios (40 per family × BENCH_SCALE, at least 10), stores them through a service on
 * `serviceEnv`'s database, then asks every question once per weight combination, each on its own
 * service.
 */
export async function benchRankingWeights(
  serviceEnv: Record<string, string | undefined>,
  scale: number,
): Promise<WeightsReport> {
  const started = Date.now();
  const instances = Math.max(10, Math.round(40 * scale));
  const scenarios = buildScenarios(instances);
  const contextMaxMemories = Number(serviceEnv.CONTEXT_MAX_MEMORIES ?? '10');

  const service = await ServiceProcess.start(serviceEnv);
  let stored: StoredScenario[];
  try {
    stored = await storeScenarios(service.url, scenarios);
  } finally {
    await service.stop();
  }

  const combos = combinations();
  const startFor = (weights: WeightCombo) => {
    const starting = ServiceProcess.start({
      ...serviceEnv,
      RANK_WEIGHT_RELEVANCE: String(weights.relevance),
      RANK_WEIGHT_IMPORTANCE: String(weights.importance),
      RANK_WEIGHT_RECENCY: String(weights.recency),
      RANK_RECENCY_HALF_LIFE_DAYS: String(weights.halfLifeDays),
    });
    starting.catch(() => undefined); // awaited later; not an unhandled rejection meanwhile
    return starting;
  };
  // On a server the next service boots while the current one is asked (booting reads no memories, and
  // its decay job finds none due); PGlite is one process's, so there one service runs at a time.
  const overlap = serviceEnv.DATABASE_URL !== undefined;
  let next = overlap ? startFor(combos[0].weights) : undefined;
  const rows: WeightsRow[] = [];
  let checks: WeightsReport['checks'];
  let setupSeconds: number;
  try {
    checks = await withDatabase(serviceEnv, async (sql) => {
      await sql(backdateSql(stored));
      return checkScenarios(sql, stored);
    });
    if (checks.unexpectedMatches + checks.missingMatches + checks.unequalImportancePairs > 0)
      console.log(`weights: scenario checks not clean: ${JSON.stringify(checks)}`);
    setupSeconds = seconds(started);

    for (const [index, { weights, note }] of combos.entries()) {
      const runStarted = Date.now();
      const runService = await (next ?? startFor(weights));
      next = overlap && index + 1 < combos.length ? startFor(combos[index + 1].weights) : undefined;
      let positions: Array<{ family: WeightFamily; position: number }>;
      try {
        positions = await askAll(runService.url, stored);
      } finally {
        await runService.stop();
      }
      // The requests marked the injected memories as used: the next run must see the same ages.
      await withDatabase(serviceEnv, (sql) => sql(RESET_ACCESS_SQL));
      rows.push(score(weights, note, positions, seconds(runStarted)));
    }
  } finally {
    if (next)
      await next.then(
        (pending) => pending.stop(),
        () => undefined,
      );
  }

  return {
    families: WEIGHT_FAMILIES.map((name) => {
      const ofFamily = scenarios.filter((s) => s.family === name);
      return { name, instances: ofFamily.length, memoriesPerProfile: ofFamily[0]?.memories.length ?? 0 };
    }),
    memoriesStored: scenarios.reduce((sum, s) => sum + s.memories.length, 0),
    contextMaxMemories,
    checks,
    rows,
    setupSeconds,
    seconds: seconds(started),
  };
}

/** The service's defaults first, the grid, the defaults with other half-lives, relevance alone. */
function combinations(): Array<{ weights: WeightCombo; note: WeightsRow['note'] }> {
  const list: Array<{ weights: WeightCombo; note: WeightsRow['note'] }> = [
    { weights: DEFAULTS, note: 'default' },
  ];
  for (const relevance of GRID.relevance)
    for (const importance of GRID.importance)
      for (const recency of GRID.recency) {
        const weights = { relevance, importance, recency, halfLifeDays: DEFAULTS.halfLifeDays };
        if (!sameWeights(weights, DEFAULTS)) list.push({ weights, note: 'grid' });
      }
  for (const halfLifeDays of HALF_LIVES)
    list.push({ weights: { ...DEFAULTS, halfLifeDays }, note: 'half-life' });
  list.push({
    weights: { relevance: 1, importance: 0, recency: 0, halfLifeDays: DEFAULTS.halfLifeDays },
    note: 'relevance only',
  });
  return list;
}

function sameWeights(a: WeightCombo, b: WeightCombo): boolean {
  return (
    a.relevance === b.relevance &&
    a.importance === b.importance &&
    a.recency === b.recency &&
    a.halfLifeDays === b.halfLifeDays
  );
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

/** mulberry32: a small deterministic generator, so every run asks the same questions. */
class Random {
  constructor(private state: number) {}

  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform in [min, max], to two decimals. */
  between(min: number, max: number): number {
    return Math.round((min + this.next() * (max - min)) * 100) / 100;
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }

  /** Two different elements. */
  pickTwo<T>(list: readonly T[]): [T, T] {
    const first = this.int(0, list.length - 1);
    const second = (first + this.int(1, list.length - 1)) % list.length;
    return [list[first], list[second]];
  }

  /**
   * An age in days: whole days plus at most 0.9 of a day, so that the decay counted up to the last
   * full day stays current for hours (the service's decay job then has nothing due during the run).
   */
  days(min: number, max: number): number {
    return this.int(min, Math.max(min, max - 1)) + this.int(0, 90) / 100;
  }

  digits(count: number): string {
    let text = '';
    for (let i = 0; i < count; i++) text += String(this.int(0, 9));
    return text;
  }
}

const FIRST_NAMES = ['Nadia', 'Oskar', 'Priya', 'Mateo', 'Hannah', 'Kwame', 'Sofia', 'Dev', 'Lotte', 'Amir'];
const SURNAMES = ['Okafor', 'Lindqvist', 'Moreau', 'Haddad', 'Kowalski', 'Nakamura', 'Brennan', 'Varga'];
const STREETS = ['Elm Street', 'Mill Road', 'Quay Lane', 'Orchard Row', 'Castle Hill', 'Tanner Street'];
const MONTHS = ['January', 'March', 'April', 'June', 'August', 'October', 'November', 'December'];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const COLOURS = ['blue', 'terracotta', 'green', 'white', 'striped', 'yellow'];

/** An attribute whose value changes: the older and the newer statement share its key words. */
interface Attribute {
  question: string;
  statement: (value: string) => string;
  values: string[];
}

const ATTRIBUTES: Attribute[] = [
  {
    question: 'What is my favourite drink?',
    statement: (v) => `My favourite drink is ${v}`,
    values: ['coffee', 'green tea', 'an oat milk latte', 'sparkling water', 'hot chocolate', 'chai'],
  },
  {
    question: 'What is my favourite cuisine?',
    statement: (v) => `My favourite cuisine is ${v}`,
    values: ['Thai', 'Italian', 'Ethiopian', 'Korean', 'Mexican', 'Lebanese'],
  },
  {
    question: 'Where do I work?',
    statement: (v) => `I work at ${v}`,
    values: ['a bakery', 'Siemens', 'the city library', 'a small design studio', 'the university hospital'],
  },
  {
    question: 'Which city do I live in?',
    statement: (v) => `I live in ${v}`,
    values: ['Leeds', 'Bristol', 'Lyon', 'Porto', 'Denver', 'Osaka'],
  },
  {
    question: 'What car do I drive?',
    statement: (v) => `I drive a ${v}`,
    values: ['red Fiat Panda', 'blue Skoda Octavia', 'Tesla Model 3', 'Toyota Yaris', 'Volvo estate'],
  },
  {
    question: 'What phone do I have?',
    statement: (v) => `My phone is a ${v}`,
    values: ['Pixel 7', 'iPhone 12', 'Samsung Galaxy S21', 'Fairphone 4', 'Nokia G22'],
  },
  {
    question: 'Which days do I go to the gym?',
    statement: (v) => `I go to the gym on ${v}`,
    values: ['Mondays and Thursdays', 'weekends', 'Tuesday mornings', 'Friday evenings', 'Wednesdays'],
  },
  {
    question: 'What time do I go to bed?',
    statement: (v) => `I usually go to bed at ${v}`,
    values: ['11 pm', 'midnight', '10 pm', 'half past ten', '1 am'],
  },
  {
    question: 'What diet am I following?',
    statement: (v) => `I am following a ${v} diet`,
    values: ['vegetarian', 'vegan', 'keto', 'pescatarian', 'low carb', 'Mediterranean'],
  },
  {
    question: 'Who is my manager?',
    statement: (v) => `My manager is ${v}`,
    values: ['Dana', 'Marcus', 'Li Wei', 'Fatima', 'Oskar', 'Greta'],
  },
  {
    question: 'How do I commute?',
    statement: (v) => `I commute ${v}`,
    values: ['by bike', 'by train', 'by bus', 'by car', 'on foot', 'by scooter'],
  },
  {
    question: 'Which band is my favourite?',
    statement: (v) => `My favourite band is ${v}`,
    values: ['Radiohead', 'Arctic Monkeys', 'Fleetwood Mac', 'Daft Punk', 'Wet Leg', 'Khruangbin'],
  },
  {
    question: 'What laptop do I use?',
    statement: (v) => `I use a ${v} laptop`,
    values: ['ThinkPad X1', 'MacBook Air', 'Dell XPS 13', 'Framework 13', 'Surface'],
  },
  {
    question: 'What is my shoe size?',
    statement: (v) => `My shoe size is ${v}`,
    values: ['42', '43', '44', '9 UK', '10 UK', '45'],
  },
  {
    question: 'Which language am I learning?',
    statement: (v) => `I am learning ${v}`,
    values: ['Spanish', 'Japanese', 'German', 'Portuguese', 'Italian', 'Welsh'],
  },
  {
    question: 'What book am I reading?',
    statement: (v) => `The book I am reading is ${v}`,
    values: ['Dune', 'Middlemarch', 'The Overstory', 'Piranesi', 'Project Hail Mary', 'Stoner'],
  },
  {
    question: 'Which bank do I use?',
    statement: (v) => `My bank is ${v}`,
    values: ['Monzo', 'Barclays', 'ING', 'Revolut', 'Triodos', 'Santander'],
  },
  {
    question: 'Who is my internet provider?',
    statement: (v) => `My internet provider is ${v}`,
    values: ['Virgin Media', 'BT', 'Sky', 'Hyperoptic', 'Vodafone', 'TalkTalk'],
  },
  {
    question: 'When is our team standup?',
    statement: (v) => `Our team standup is at ${v}`,
    values: ['9:30', '10:00', '9:15', '11:00', '14:00', '8:45'],
  },
  {
    question: 'What is my favourite sport to watch?',
    statement: (v) => `My favourite sport to watch is ${v}`,
    values: ['tennis', 'cycling', 'football', 'basketball', 'rugby', 'snooker'],
  },
  {
    question: 'Who is my doctor?',
    statement: (v) => `My doctor is ${v}`,
    values: ['Dr Shah', 'Dr Evans', 'Dr Nowak', 'Dr Adeyemi', 'Dr Fischer', 'Dr Rossi'],
  },
  {
    question: 'What instrument do I play?',
    statement: (v) => `I play the ${v}`,
    values: ['piano', 'cello', 'guitar', 'trumpet', 'drums', 'violin'],
  },
];

/** How the newer statement of an attribute is worded. */
const UPDATE_WORDINGS: Array<(statement: string) => string> = [
  (s) => `${s}.`,
  (s) => `${s} now.`,
  (s) => `These days ${s.startsWith('I ') ? s : `${s.charAt(0).toLowerCase()}${s.slice(1)}`}.`,
  (s) => `${s}, since recently.`,
];

const PEOPLE = [
  'sister Anna',
  'brother Felix',
  'son Leo',
  'daughter Maya',
  'father Henrik',
  'mother Ines',
  'grandmother Rosa',
  'husband Tom',
  'wife Elena',
  'boss Karen',
  'flatmate Jonas',
  'nephew Arlo',
  'friend Ravi',
  'cousin Dmitri',
  'colleague Yuki',
  'neighbour Gloria',
  'uncle Bertram',
  'aunt Clara',
  'grandfather Otto',
  'stepson Kai',
];
const PERSON_QUESTIONS = [
  (p: string) => `What should I remember about my ${p}?`,
  (p: string) => `Tell me about my ${p}.`,
  (p: string) => `Anything to keep in mind about my ${p}?`,
  (p: string) => `What matters about my ${p}?`,
];
/** Important and trivial facts about a person; every one has 5 full-text lexemes, so pairs rank equally. */
const IMPORTANT_FACTS = [
  'has type one diabetes',
  'is deaf in one ear',
  'has surgery next Tuesday',
  'has severe epilepsy',
  'is allergic to penicillin',
  'must not drive after dark',
  'is allergic to latex',
  'has a nut allergy',
  'is hard of hearing',
  'has high blood pressure',
  'is blind in one eye',
  'must avoid grapefruit juice',
  'has a metal knee implant',
];
const TRIVIAL_FACTS = [
  'likes the colour teal',
  'once wore a yellow hat',
  'prefers window seats',
  'enjoys crossword puzzles',
  'wears odd socks',
  'watched a cartoon yesterday',
  'whistles when gardening',
  'likes salted caramel',
  'collects old stamps',
  'sings in the shower',
  'likes jigsaw puzzles',
];

/** A specific fact and the question it answers (the question's words are all in the fact). */
type Topic = (r: Random) => { fact: string; question: string };

const TOPICS: Topic[] = [
  (r) => ({
    fact: `My dentist is Dr ${r.pick(SURNAMES)} on ${r.pick(STREETS)}`,
    question: 'Who is my dentist?',
  }),
  (r) => {
    const place = r.pick(['cabin', 'studio', 'caravan', 'boathouse']);
    return {
      fact: `The wifi password at the ${place} is ${r.pick(['bluefinch', 'otterpop', 'mossy', 'tangerine'])}${r.digits(2)}`,
      question: `What is the wifi password at the ${place}?`,
    };
  },
  (r) => ({ fact: `My bike lock code is ${r.digits(4)}`, question: 'What is my bike lock code?' }),
  (r) => {
    const place = r.pick(['swimming pool', 'climbing centre', 'ice rink']);
    return {
      fact: `My locker at the ${place} is number ${r.int(10, 99)}`,
      question: `Which locker do I have at the ${place}?`,
    };
  },
  (r) => {
    const vehicle = r.pick(['van', 'motorbike', 'camper']);
    return {
      fact: `I parked the ${vehicle} on level ${r.int(2, 6)} of the ${r.pick(['airport', 'hospital', 'station'])} car park`,
      question: `Where did I park the ${vehicle}?`,
    };
  },
  (r) => ({
    fact: `My library card expires in ${r.pick(MONTHS)}`,
    question: 'When does my library card expire?',
  }),
  (r) => ({
    fact: `The plumber can be reached on 0161 ${r.digits(3)} ${r.digits(4)}`,
    question: 'How can the plumber be reached?',
  }),
  (r) => {
    const venue = r.pick(['theatre', 'opera', 'concert hall']);
    return {
      fact: `My seat at the ${venue} is row ${r.pick(['C', 'F', 'K', 'M'])} seat ${r.int(1, 30)}`,
      question: `Where is my seat at the ${venue}?`,
    };
  },
  (r) => ({
    fact: `The spare key is under the ${r.pick(COLOURS)} flowerpot`,
    question: 'Where is the spare key?',
  }),
  (r) => ({
    fact: `My hotel booking reference is QX${r.digits(4)}`,
    question: 'What is my hotel booking reference?',
  }),
  (r) => {
    const item = r.pick(['lamp', 'rug', 'armchair', 'mirror']);
    return {
      fact: `I bought the ${item} from a shop in ${r.pick(['Ghent', 'Utrecht', 'Bath', 'Girona'])}`,
      question: `Where did I buy the ${item}?`,
    };
  },
  (r) => ({ fact: `My tailor is on ${r.pick(STREETS)}`, question: 'Where is my tailor?' }),
  (r) => ({
    fact: `The recycling goes out on ${r.pick(WEEKDAYS)}`,
    question: 'When does the recycling go out?',
  }),
  (r) => {
    const activity = r.pick(['yoga', 'pilates', 'salsa', 'pottery']);
    return {
      fact: `My ${activity} class starts at ${r.int(6, 8)} pm`,
      question: `When does my ${activity} class start?`,
    };
  },
  (r) => {
    const who = r.pick(['niece', 'godson', 'goddaughter']);
    return {
      fact: `My ${who}'s birthday is ${r.int(1, 28)} ${r.pick(MONTHS)}`,
      question: `When is my ${who}'s birthday?`,
    };
  },
  (r) => ({
    fact: `My favourite pizza topping is ${r.pick(['artichoke', 'anchovies', 'pineapple', 'mushrooms'])}`,
    question: 'What is my favourite pizza topping?',
  }),
  (r) => ({
    fact: `The printer takes ${r.pick(['Brother', 'Canon', 'Epson', 'HP'])} toner`,
    question: 'Which toner does the printer take?',
  }),
  (r) => ({
    fact: `I keep my passport in the ${r.pick(['top desk drawer', 'filing box', 'bedside cabinet'])}`,
    question: 'Where do I keep my passport?',
  }),
  (r) => ({
    fact: `My gym membership number is ${r.digits(6)}`,
    question: 'What is my gym membership number?',
  }),
  (r) => ({
    fact: `The boiler was serviced by ${r.pick(['Hartley Heating', 'Apex Gas', 'Warmworks'])}`,
    question: 'Who serviced the boiler?',
  }),
  (r) => ({ fact: `My barber is called ${r.pick(FIRST_NAMES)}`, question: 'What is my barber called?' }),
  (r) => ({
    fact: `The neighbour's cat is named ${r.pick(['Turnip', 'Mochi', 'Biscuit', 'Pickle'])}`,
    question: "What is the neighbour's cat named?",
  }),
  (r) => {
    const item = r.pick(['coat', 'suit', 'duvet']);
    return {
      fact: `My ${item} is at the dry cleaner on ${r.pick(STREETS)}`,
      question: `Where is my ${item}?`,
    };
  },
  (r) => {
    const item = r.pick(['ladder', 'drill', 'tent']);
    return {
      fact: `I borrowed the ${item} from ${r.pick(FIRST_NAMES)}`,
      question: `Who did I borrow the ${item} from?`,
    };
  },
  (r) => ({
    fact: `My allotment plot is number ${r.int(1, 80)}`,
    question: 'What is my allotment plot number?',
  }),
  (r) => {
    const colour = r.pick(COLOURS);
    return {
      fact: `I planted ${r.pick(['carrot', 'basil', 'chilli', 'radish'])} seeds in the ${colour} planter`,
      question: `What did I plant in the ${colour} planter?`,
    };
  },
  (r) => ({
    fact: `I left my umbrella at ${r.pick(['the dentist', "Nadia's flat", 'the office', 'the cinema'])}`,
    question: 'Where did I leave my umbrella?',
  }),
  (r) => ({
    fact: `The car tyre pressure should be ${r.int(30, 38)} psi`,
    question: 'What should the car tyre pressure be?',
  }),
];

/** Partial matches: "my {specific}'s {generic}" answers, others share only the generic word. */
const SPECIFICS = ['dentist', 'plumber', 'accountant', 'landlord', 'vet', 'mechanic', 'physio', 'optician'];
const GENERICS: Array<{ word: string; value: (r: Random) => string }> = [
  { word: 'address', value: (r) => `${r.int(2, 90)} ${r.pick(STREETS)}` },
  { word: 'number', value: (r) => `07700 ${r.digits(6)}` },
  { word: 'name', value: (r) => `${r.pick(FIRST_NAMES)} ${r.pick(SURNAMES)}` },
  {
    word: 'email',
    value: (r) => `${r.pick(FIRST_NAMES).toLowerCase()}@${r.pick(SURNAMES).toLowerCase()}.example`,
  },
];
/** Whose generic detail a partial match gives (none of them is a specific). */
const OTHERS = [
  'cousin',
  'goddaughter',
  'grandmother',
  'best friend',
  'manager',
  'brother',
  'aunt',
  'stepfather',
];

/** Unrelated memories: a vocabulary of their own, checked against every question (`checks`). */
const FRIENDS = ['Quentin', 'Beatrix', 'Ottilie', 'Rufus', 'Ingrid', 'Casimir', 'Zeno', 'Isolde', 'Lysander'];
const ACTIVITIES = [
  'kayaking',
  'bouldering',
  'baking sourdough',
  'birdwatching',
  'sketching',
  'knitting',
  'stargazing',
  'orienteering',
  'surfing',
  'archery',
  'snorkelling',
  'foraging',
];
const WHENS = [
  'last weekend',
  'on holiday',
  'after the storm',
  'during the festival',
  'before dawn',
  'over Easter',
];
const PLACES = [
  'Reykjavik',
  'the Dolomites',
  'Patagonia',
  'Tasmania',
  'Kyoto',
  'the Hebrides',
  'Sardinia',
  'Tallinn',
];
const DISHES = ['ramen', 'paella', 'pierogi', 'goulash', 'ceviche', 'dumplings', 'tagine'];
const VENUES = ['food stall', 'bistro', 'tavern', 'diner', 'noodle bar'];
const ANIMALS = ['heron', 'fox', 'otter', 'kingfisher', 'hedgehog', 'seal', 'badger', 'owl'];
const THEMES = ['volcanoes', 'medieval maps', 'jazz history', 'octopuses', 'Roman roads', 'glaciers'];
const EVENTS = ['a picnic', 'a barbecue', 'a pub quiz', 'a canal walk', 'a bake sale'];
const ADJECTIVES = ['gripping', 'quirky', 'gentle', 'chaotic', 'lovely', 'strange'];
const FILLERS: Array<(r: Random) => string> = [
  (r) => `Went ${r.pick(ACTIVITIES)} with ${r.pick(FRIENDS)} ${r.pick(WHENS)}`,
  (r) => `${r.pick(FRIENDS)} recommended a ${r.pick(ADJECTIVES)} podcast about ${r.pick(THEMES)}`,
  (r) => `Dreaming of a trip to ${r.pick(PLACES)} ${r.pick(WHENS)}`,
  (r) => `Finished a ${r.pick(ADJECTIVES)} novel set in ${r.pick(PLACES)}`,
  (r) => `Organising ${r.pick(EVENTS)} with ${r.pick(FRIENDS)} in ${r.pick(MONTHS)}`,
  (r) => `Tried ${r.pick(DISHES)} at a ${r.pick(ADJECTIVES)} ${r.pick(VENUES)} in ${r.pick(PLACES)}`,
  (r) => `Spotted ${withArticle(r.pick(ANIMALS))} while ${r.pick(ACTIVITIES)} ${r.pick(WHENS)}`,
  (r) => `${r.pick(FRIENDS)} is training for a ${r.pick(['marathon', 'triathlon', 'fell race'])}`,
];

function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

function fillers(
  r: Random,
  count: number,
  importance: [number, number],
  ageDays: [number, number],
): MemorySeed[] {
  const contents = new Set<string>();
  while (contents.size < count) contents.add(r.pick(FILLERS)(r));
  return [...contents].map((content) => ({
    content,
    type: 'event',
    importance: r.between(...importance),
    ageDays: r.days(...ageDays),
    role: 'other',
  }));
}

export function buildScenarios(instances: number): Scenario[] {
  const r = new Random(SEED);
  const scenarios: Scenario[] = [];
  const add = (family: WeightFamily, i: number, question: string, memories: MemorySeed[]) =>
    scenarios.push({ family, externalId: `${PROFILE_PREFIX}${family}-${i}`, question, memories });

  for (let i = 0; i < instances; i++) {
    const attribute = ATTRIBUTES[i % ATTRIBUTES.length];
    const [older, newer] = r.pickTwo(attribute.values);
    const importance = r.between(0.4, 0.8);
    add('update', i, attribute.question, [
      {
        content: `${attribute.statement(older)}.`,
        type: 'fact',
        importance,
        ageDays: r.days(30, 180),
        role: 'rival',
      },
      {
        content: r.pick(UPDATE_WORDINGS)(attribute.statement(newer)),
        type: 'fact',
        importance,
        ageDays: r.days(0, 10),
        role: 'right',
      },
      ...fillers(r, 6, [0.3, 0.7], [1, 60]),
    ]);
  }

  for (let i = 0; i < instances; i++) {
    const person = PEOPLE[i % PEOPLE.length];
    const capitalised = `My ${person}`;
    const ageDays = r.days(1, 60);
    add('importance', i, r.pick(PERSON_QUESTIONS)(person), [
      {
        content: `${capitalised} ${r.pick(IMPORTANT_FACTS)}.`,
        type: 'fact',
        importance: 0.9,
        ageDays,
        role: 'right',
      },
      {
        content: `${capitalised} ${r.pick(TRIVIAL_FACTS)}.`,
        type: 'fact',
        importance: 0.2,
        ageDays,
        role: 'rival',
      },
      ...fillers(r, 6, [0.3, 0.7], [1, 60]),
    ]);
  }

  for (let i = 0; i < instances; i++) {
    const topic = TOPICS[i % TOPICS.length](r);
    add('relevance-vs-importance', i, topic.question, [
      { content: topic.fact, type: 'fact', importance: 0.2, ageDays: r.days(3, 30), role: 'right' },
      ...fillers(r, 16, [0.8, 1], [0, 7]),
    ]);
  }

  for (let i = 0; i < instances; i++) {
    // Another topic than the same instance of the previous family.
    const topic = TOPICS[(i + 7) % TOPICS.length](r);
    add('old-relevant', i, topic.question, [
      {
        content: topic.fact,
        type: 'fact',
        importance: r.between(0.4, 0.7),
        ageDays: r.days(300, 500),
        role: 'right',
      },
      ...fillers(r, 15, [0.3, 0.9], [0, 21]),
    ]);
  }

  for (let i = 0; i < instances; i++) {
    const specific = SPECIFICS[i % SPECIFICS.length];
    const generic = GENERICS[Math.floor(i / SPECIFICS.length) % GENERICS.length];
    const partials = new Set<string>();
    while (partials.size < 3) partials.add(r.pick(OTHERS));
    add('partial-match', i, `What is my ${specific}'s ${generic.word}?`, [
      {
        content: `My ${specific}'s ${generic.word} is ${generic.value(r)}`,
        type: 'fact',
        importance: 0.3,
        ageDays: r.days(5, 60),
        role: 'right',
      },
      ...[...partials].map((other): MemorySeed => ({
        content: `My ${other}'s ${generic.word} is ${generic.value(r)}`,
        type: 'fact',
        importance: r.between(0.8, 1),
        ageDays: r.days(0, 10),
        role: 'partial',
      })),
      ...fillers(r, 12, [0.3, 0.9], [0, 30]),
    ]);
  }
  return scenarios;
}

// ---------------------------------------------------------------------------------------------------
// Storing, ageing, asking

async function storeScenarios(serviceUrl: string, scenarios: Scenario[]): Promise<StoredScenario[]> {
  return inParallel(
    scenarios,
    async (scenario) => {
      await call(serviceUrl, 'POST', '/api/profiles', { externalId: scenario.externalId });
      const memoryIds: string[] = [];
      for (const memory of scenario.memories) {
        const res = await call(
          serviceUrl,
          'POST',
          `/api/profiles/${encodeURIComponent(scenario.externalId)}/memories`,
          {
            content: memory.content,
            type: memory.type,
            importance: memory.importance,
          },
        );
        const { memory: created } = (await res.json()) as { memory: { id: string } };
        memoryIds.push(created.id);
      }
      if (new Set(memoryIds).size !== memoryIds.length)
        throw new Error(`weights: duplicate memory content in ${scenario.externalId}`);
      const rightId = memoryIds[scenario.memories.findIndex((m) => m.role === 'right')];
      return { ...scenario, memoryIds, rightId };
    },
    STORE_CONCURRENCY,
  );
}

/**
 * Each memory's age, unused since created, and the decay the service's daily job would have applied
 * by now (counted up to the last full day, so the job has nothing left to do at the next start).
 */
function backdateSql(stored: StoredScenario[]): string {
  const values = stored.flatMap((s) => s.memories.map((m, i) => `('${s.memoryIds[i]}'::uuid, ${m.ageDays})`));
  return `UPDATE memories m
    SET created_at = now() - a.age * interval '1 day',
        last_accessed_at = NULL,
        decay_factor = greatest(${DECAY_FLOOR}, power(${DAILY_DECAY_RATE}, floor(a.age))),
        decay_counted_until = now() - a.age * interval '1 day' + floor(a.age) * interval '1 day'
    FROM (SELECT id, age::float8 AS age FROM (VALUES ${values.join(', ')}) AS v (id, age)) AS a
    WHERE m.id = a.id`;
}

const RESET_ACCESS_SQL = `UPDATE memories SET last_accessed_at = NULL
  WHERE last_accessed_at IS NOT NULL
    AND profile_id IN (SELECT id FROM profiles WHERE external_id LIKE '${PROFILE_PREFIX}%')`;

/**
 * Which memories share a word with their question, by the service's own rule (each word of the
 * question as written and as its English stem, stop words left out), against the roles the scenarios
 * give them; and whether each importance pair has the same full-text length.
 */
async function checkScenarios(sql: Sql, stored: StoredScenario[]): Promise<WeightsReport['checks']> {
  const questions = stored.map((s) => `(${literal(s.externalId)}, ${literal(s.question)})`).join(', ');
  const matched = await sql<{ id: string }>(
    `WITH q (external_id, question) AS (VALUES ${questions}),
     units AS (
       SELECT p.id AS profile_id, w.exact, s.stem
       FROM q JOIN profiles p ON p.external_id = q.external_id,
            unnest(tsvector_to_array(to_tsvector('simple'::regconfig, q.question))) AS w (exact),
            LATERAL (SELECT CASE WHEN count(*) > 1 THEN w.exact ELSE min(l) END AS stem
                     FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, w.exact))) AS l) AS s
       WHERE s.stem IS NOT NULL
     )
     SELECT DISTINCT m.id::text AS id FROM units u JOIN memories m ON m.profile_id = u.profile_id
     WHERE m.search_vector @@ quote_literal(u.exact)::tsquery OR m.search_vector @@ quote_literal(u.stem)::tsquery`,
  );
  const matchedIds = new Set(matched.map((row) => row.id));
  let unexpectedMatches = 0;
  let missingMatches = 0;
  for (const s of stored)
    s.memories.forEach((m, i) => {
      const matches = matchedIds.has(s.memoryIds[i]);
      if (m.role === 'other' && matches) unexpectedMatches++;
      if (m.role !== 'other' && !matches) missingMatches++;
    });

  const pairs = stored.filter((s) => s.family === 'importance');
  const lengths = await sql<{ id: string; length: number }>(
    `SELECT id::text AS id, length(search_vector) AS length FROM memories
     WHERE id IN (${pairs.flatMap((s) => s.memoryIds.slice(0, 2).map((id) => `'${id}'`)).join(', ')})`,
  );
  const lengthOf = new Map(lengths.map((row) => [row.id, Number(row.length)]));
  const unequalImportancePairs = pairs.filter(
    (s) => lengthOf.get(s.memoryIds[0]) !== lengthOf.get(s.memoryIds[1]),
  ).length;
  return { unexpectedMatches, missingMatches, unequalImportancePairs };
}

/** Asks every question once; the position (1-based) of its right memory among the injected, 0 if none. */
function askAll(
  serviceUrl: string,
  stored: StoredScenario[],
): Promise<Array<{ family: WeightFamily; position: number }>> {
  return inParallel(stored, async (scenario) => {
    const res = await call(
      serviceUrl,
      'POST',
      '/v1/chat/completions',
      {
        model: 'bench-model',
        messages: [{ role: 'user', content: scenario.question }],
        service: { debug: true, skipExtraction: true },
      },
      { 'x-service-id': scenario.externalId },
    );
    await res.arrayBuffer();
    // In rank order (the proxy lists the injected memories as ranked).
    const injected = (/memories=([^;]*)/.exec(res.headers.get('x-service-context-ids') ?? '')?.[1] ?? '')
      .split(',')
      .filter((id) => id.length > 0);
    return { family: scenario.family, position: injected.indexOf(scenario.rightId) + 1 };
  });
}

function score(
  weights: WeightCombo,
  note: WeightsRow['note'],
  positions: Array<{ family: WeightFamily; position: number }>,
  runSeconds: number,
): WeightsRow {
  const families = {} as Record<WeightFamily, FamilyScore>;
  for (const family of WEIGHT_FAMILIES) {
    const ofFamily = positions.filter((p) => p.family === family).map((p) => p.position);
    families[family] = {
      questions: ofFamily.length,
      hitAt1: mean(ofFamily.map((p) => (p === 1 ? 1 : 0))),
      recall: mean(ofFamily.map((p) => (p > 0 ? 1 : 0))),
      mrr: mean(ofFamily.map((p) => (p > 0 ? 1 / p : 0))),
    };
  }
  return {
    weights,
    note,
    families,
    meanHitAt1: mean(WEIGHT_FAMILIES.map((f) => families[f].hitAt1)),
    meanRecall: mean(WEIGHT_FAMILIES.map((f) => families[f].recall)),
    seconds: runSeconds,
  };
}

// ---------------------------------------------------------------------------------------------------
// Printing

export function printWeightsTable(report: WeightsReport): void {
  const label = (w: WeightCombo) => `${w.relevance} / ${w.importance} / ${w.recency}, ${w.halfLifeDays} d`;
  const sizes = report.families.map((f) => `${f.name} ${f.instances}×${f.memoriesPerProfile}`).join(', ');
  console.log(
    `\nranking weights: ${report.memoriesStored} memories (${sizes}); setup ${report.setupSeconds} s, total ${report.seconds} s; checks ${JSON.stringify(report.checks)}`,
  );
  console.log(
    `| weights rel / imp / rec, half-life | ${WEIGHT_FAMILIES.join(' | ')} | mean hit@1 | recall@${report.contextMaxMemories} (${WEIGHT_FAMILIES.slice(2).join(' / ')}) |`,
  );
  console.log(`|---|${WEIGHT_FAMILIES.map(() => '---:|').join('')}---:|---:|`);
  for (const row of report.rows) {
    const note = row.note === 'grid' ? '' : ` (${row.note})`;
    const recalls = WEIGHT_FAMILIES.slice(2)
      .map((f) => row.families[f].recall)
      .join(' / ');
    console.log(
      `| ${label(row.weights)}${note} | ${WEIGHT_FAMILIES.map((f) => row.families[f].hitAt1).join(' | ')} | ${row.meanHitAt1} | ${recalls} |`,
    );
  }
  const ranked = [...report.rows].sort((a, b) => b.meanHitAt1 - a.meanHitAt1 || b.meanRecall - a.meanRecall);
  const best = ranked.filter((row) => row.meanHitAt1 === ranked[0].meanHitAt1);
  const defaults = report.rows.find((row) => row.note === 'default');
  console.log(
    `best mean hit@1 ${ranked[0].meanHitAt1}: ${best.map((row) => label(row.weights)).join('; ')}` +
      (defaults
        ? `; defaults ${defaults.meanHitAt1} (rank ${ranked.findIndex((row) => row === defaults) + 1} of ${ranked.length})`
        : ''),
  );
}

// ---------------------------------------------------------------------------------------------------
// Helpers

type Sql = <T = Record<string, unknown>>(text: string) => Promise<T[]>;

/** SQL on the target's database: a client of the server, or the embedded one (the service stopped). */
async function withDatabase<T>(
  serviceEnv: Record<string, string | undefined>,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  if (serviceEnv.DATABASE_URL) {
    const client = new Client({ connectionString: serviceEnv.DATABASE_URL });
    await client.connect();
    try {
      return await work(async <R>(text: string) => (await client.query(text)).rows as R[]);
    } finally {
      await client.end();
    }
  }
  const embedded = await EmbeddedDatabase.open(serviceEnv.DATA_DIR!);
  try {
    return await work(async <R>(text: string) => (await embedded.pglite.query<R>(text)).rows);
  } finally {
    await embedded.close();
  }
}

async function inParallel<T, R>(
  items: T[],
  work: (item: T) => Promise<R>,
  concurrency = CONCURRENCY,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

async function call(
  baseUrl: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function mean(values: number[]): number {
  return values.length === 0
    ? 0
    : Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000;
}

function seconds(since: number): number {
  return Math.round((Date.now() - since) / 100) / 10;
}
