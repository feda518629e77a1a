/**
 * The synthetic scenarios of the ranking-weights benchmark (see weights.bench.ts): deterministic, one
 * profile each, with the one memory that should be injected first.
 */

export const WEIGHT_FAMILIES = [
  'update',
  'importance',
  'relevance-vs-importance',
  'old-relevant',
  'partial-match',
] as const;
export type WeightFamily = (typeof WEIGHT_FAMILIES)[number];

export const PROFILE_PREFIX = 'bench-weights-';
const SEED = 20_251_121;

export type Role = 'right' | 'rival' | 'partial' | 'other';

export interface MemorySeed {
  content: string;
  type: 'fact' | 'preference' | 'event';
  importance: number;
  ageDays: number;
  /** right: the answer; rival, partial: match the question (fully, partly) but are not the answer. */
  role: Role;
}

export interface Scenario {
  family: WeightFamily;
  externalId: string;
  question: string;
  memories: MemorySeed[];
}

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
