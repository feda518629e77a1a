import { turnsWhile } from '../../test/support/event-loop';
import { factKindOf } from '../memories/fact-kinds';
import { toThirdPerson } from './third-person';
import { DEFAULT_TRAIT_SCHEMAS } from '../traits/default-trait-schemas';
import { TraitSchema } from '../traits/trait-schema';
import { checkTraitValue } from '../traits/trait-value';
import { MemoryType } from './extraction-types';
import {
  MAX_HEURISTIC_MEMORIES,
  MAX_HEURISTIC_TEXT_CHARS,
  extractHeuristically,
  extractHeuristicallyInSlices,
  readableStart,
} from './heuristic-extractor';

interface Row {
  text: string;
  /** Exactly the traits the text must yield (key -> value); none when absent. */
  traits?: Record<string, unknown>;
  /** The type of the one memory the text must yield (its content being the text); none when absent. */
  memory?: MemoryType;
}

const ROWS: Row[] = [
  // name
  { text: 'My name is John Smith.', traits: { name: 'John Smith' } },
  { text: 'my name is anna', traits: { name: 'anna' } },
  { text: "Hi, I'm Anna.", traits: { name: 'Anna' } },
  { text: 'Call me Ishmael.', traits: { name: 'Ishmael' } },
  { text: 'I go by Sam.', traits: { name: 'Sam' } },
  { text: "I'm tired." },
  { text: "I'm a developer.", memory: 'fact' },
  { text: "I'm German." },
  { text: 'my name is kind of long' },
  { text: 'My name is not important.' },
  { text: "He thinks I'm Anna." },
  { text: 'You are a pirate and I am Captain Jack.' },
  { text: 'My friends call me Bob.', memory: 'fact' },
  { text: "Don't call me Bob." },
  { text: 'What is my name?' },

  // preferred_language
  { text: 'Please answer in German.', traits: { preferred_language: 'German' } },
  { text: 'From now on, reply in español.', traits: { preferred_language: 'Spanish' } },
  { text: 'Could you answer in French please?', traits: { preferred_language: 'French' } },
  { text: 'I prefer Spanish.', traits: { preferred_language: 'Spanish' }, memory: 'preference' },
  { text: 'I prefer Spanish wine.', memory: 'preference' },
  { text: 'I speak French.', memory: 'fact' },
  { text: 'Answer in JSON.' },
  { text: "I'd like answers in Italian.", traits: { preferred_language: 'Italian' } },
  { text: 'My preferred language is Deutsch.', traits: { preferred_language: 'German' } },
  { text: "Don't answer in German." },
  { text: 'How do you say hello in German?' },

  // location (where the user lives) and time zone
  { text: 'I live in Berlin.', traits: { location: 'Berlin' }, memory: 'fact' },
  { text: "I'm based in Tokyo.", traits: { location: 'Tokyo' }, memory: 'fact' },
  { text: 'I’m located in Austin, Texas.', traits: { location: 'Austin, Texas' }, memory: 'fact' },
  { text: 'I live in the Netherlands.', traits: { location: 'the Netherlands' }, memory: 'fact' },
  { text: 'My timezone is europe/paris.', traits: { timezone: 'Europe/Paris' } },
  { text: 'My time zone is UTC+5:30.', traits: { timezone: 'UTC+5:30' } },
  { text: "I'm in PST.", traits: { timezone: 'PST' } },
  { text: 'My wife and I live in Rome.', traits: { location: 'Rome' }, memory: 'fact' },
  { text: 'My sister lives in Rome.', memory: 'fact' },
  { text: "I don't live in Paris anymore.", memory: 'fact' },
  {
    text: "I don't live in Paris anymore, I live in Berlin now.",
    traits: { location: 'Berlin' },
    memory: 'fact',
  },
  { text: 'I used to live in Paris.', memory: 'fact' },
  { text: "I'm from Spain.", memory: 'fact' },
  { text: 'I live in a small town.', memory: 'fact' },
  { text: "I'm in Berlin this week." },
  { text: "I'm in love." },
  { text: 'If I lived in Paris, I would walk everywhere.' },
  { text: 'I live in Berlin, I think.' },
  { text: 'Do I live in Berlin?' },
  { text: 'We live in Rome.' },

  // communication_style and detail_preference
  { text: 'Keep it short.', traits: { detail_preference: 'brief' } },
  { text: 'Can you keep your answers concise?', traits: { detail_preference: 'brief' } },
  { text: 'If possible, keep it short.', traits: { detail_preference: 'brief' } },
  { text: 'Please give me detailed explanations.', traits: { detail_preference: 'detailed' } },
  { text: "Don't keep it short." },
  { text: 'Please be formal.', traits: { communication_style: 'formal' } },
  { text: "I'd like you to be more casual.", traits: { communication_style: 'casual' } },
  { text: 'I prefer a relaxed tone.', traits: { communication_style: 'casual' }, memory: 'preference' },
  { text: 'Get to the point.', traits: { communication_style: 'direct' } },
  { text: 'Please talk to me casually.', traits: { communication_style: 'casual' } },
  { text: 'Short answers, please.', traits: { detail_preference: 'brief' } },
  { text: 'Explain everything in great detail.', traits: { detail_preference: 'detailed' } },
  { text: 'The email should be formal.' },
  { text: "Don't be formal." },
  { text: 'Be brief and be formal.', traits: { detail_preference: 'brief', communication_style: 'formal' } },

  // expertise_level
  { text: "I'm a complete beginner.", traits: { expertise_level: 'beginner' }, memory: 'fact' },
  { text: "I'm new to Rust.", traits: { expertise_level: 'beginner' }, memory: 'fact' },
  { text: "I'm an expert.", traits: { expertise_level: 'expert' }, memory: 'fact' },
  // expert or beginner in one thing says nothing of the user's level overall
  { text: "I'm an expert in databases.", memory: 'fact' },
  { text: 'I am an expert in SQL but a beginner at Rust.', memory: 'fact' },
  {
    text: 'I love surfing and hiking on weekends.',
    traits: { interests: ['surfing', 'hiking'] },
    memory: 'preference',
  },
  { text: "I'm a senior software engineer.", traits: { expertise_level: 'advanced' }, memory: 'fact' },
  { text: 'I have 12 years of experience.', traits: { expertise_level: 'advanced' }, memory: 'fact' },
  { text: 'I just started learning Go.', traits: { expertise_level: 'beginner' }, memory: 'event' },
  { text: 'I have no experience with React.', traits: { expertise_level: 'beginner' }, memory: 'fact' },
  { text: 'I have some experience in Python.', traits: { expertise_level: 'intermediate' }, memory: 'fact' },
  { text: "I'm an experienced nurse.", traits: { expertise_level: 'advanced' }, memory: 'fact' },
  { text: "I'm not a beginner.", memory: 'fact' },
  { text: 'Am I a beginner?' },
  { text: "Maybe I'm a beginner." },
  { text: 'If I were a doctor, I would know this.' },

  // interests
  { text: 'I love hiking.', traits: { interests: ['hiking'] }, memory: 'preference' },
  {
    text: "I'm interested in machine learning.",
    traits: { interests: ['machine learning'] },
    memory: 'preference',
  },
  {
    text: 'My hobbies are chess, hiking and baking.',
    traits: { interests: ['chess', 'hiking', 'baking'] },
    memory: 'preference',
  },
  { text: "I'm a big fan of jazz.", traits: { interests: ['jazz'] }, memory: 'preference' },
  { text: 'I love you.' },
  { text: 'I love it when you explain things.' },
  { text: "I'd love to visit Japan." },
  { text: 'I used to love hiking.', memory: 'fact' },

  // current_goals
  { text: "I'm trying to lose weight.", traits: { current_goals: ['lose weight'] }, memory: 'context' },
  { text: 'My goal is to run a marathon.', traits: { current_goals: ['run a marathon'] }, memory: 'context' },
  { text: "I'm working on my thesis.", traits: { current_goals: ['my thesis'] }, memory: 'context' },
  { text: 'I want to learn Spanish.', traits: { current_goals: ['learn Spanish'] } },
  { text: 'I plan to move to Canada.', traits: { current_goals: ['move to Canada'] } },
  { text: 'I want to know how this works.' },
  { text: "I'm trying to understand this code." },
  { text: "I'm working on it." },

  // memories without traits
  { text: 'I have two kids.', memory: 'fact' },
  { text: "I'm allergic to peanuts.", memory: 'fact' },
  { text: 'I was born in 1990.', memory: 'fact' },
  { text: 'I prefer tea over coffee.', memory: 'preference' },
  { text: "I don't like meetings in the morning.", memory: 'preference' },
  { text: "I can't stand loud music.", memory: 'preference' },
  { text: 'I moved to Berlin last year.', traits: { location: 'Berlin' }, memory: 'event' },
  { text: 'I moved to a new apartment near the river.', memory: 'event' },
  { text: 'I work as a data engineer.', traits: { occupation: 'data engineer' }, memory: 'fact' },
  {
    text: 'I live in Lisbon and work as a data engineer.',
    traits: { location: 'Lisbon', occupation: 'data engineer' },
    memory: 'fact',
  },
  { text: 'My brother lives in Rome and works as a nurse.', memory: 'fact' },
  { text: 'I work at Acme.', traits: { employer: 'Acme' }, memory: 'fact' },
  { text: 'I now work for Globex as a designer.', traits: { employer: 'Globex' }, memory: 'fact' },
  { text: 'Yesterday I ran a marathon.', memory: 'event' },
  { text: "I'm getting married next month.", memory: 'event' },
  { text: 'My dog died yesterday.', memory: 'event' },
  { text: 'Write me a poem about my dog.' },
  { text: 'Can you write me a poem?' },
  { text: 'I have a question about Python.' },
  { text: 'I think I like it.' },
  { text: 'My code does not compile.' },
  { text: 'John lives in Rome and works at Google.' },
  { text: 'She has two kids.' },

  // other languages and scripts: nothing, and no crash
  { text: 'Ich heiße Anna und wohne in Berlin.' },
  { text: '私は東京に住んでいます。' },
  { text: 'Я живу в Москве 🎉' },
];

describe('extractHeuristically', () => {
  it('has a large table', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(40);
  });

  it.each(ROWS)('$text', ({ text, traits = {}, memory }) => {
    const result = extractHeuristically(text, DEFAULT_TRAIT_SCHEMAS);

    expect(Object.fromEntries(result.traits.map((trait) => [trait.key, trait.value]))).toEqual(traits);
    // the content is the sentence about the user (third-person.spec.ts), with its kind of fact if any
    expect(result.memories).toEqual(
      memory === undefined
        ? []
        : [
            {
              content: toThirdPerson(text),
              type: memory,
              importance: expect.any(Number),
              factKey: factKindOf(text),
            },
          ],
    );
  });

  it('gives explicit statements more confidence than weak ones', () => {
    const [explicit] = extractHeuristically('My name is Anna.', DEFAULT_TRAIT_SCHEMAS).traits;
    const [weak] = extractHeuristically("I'm Anna.", DEFAULT_TRAIT_SCHEMAS).traits;

    expect(explicit.confidence).toBe(0.9);
    expect(weak.confidence).toBe(0.6);
  });

  it('weighs family and health above ordinary facts', () => {
    const [kids] = extractHeuristically('I have two kids.', DEFAULT_TRAIT_SCHEMAS).memories;
    const [job] = extractHeuristically('I work at Acme.', DEFAULT_TRAIT_SCHEMAS).memories;

    expect(kids.importance).toBeGreaterThan(job.importance);
    for (const memory of [kids, job]) {
      expect(memory.importance).toBeGreaterThanOrEqual(0);
      expect(memory.importance).toBeLessThanOrEqual(1);
    }
  });

  it('analyses each sentence of a longer text', () => {
    const result = extractHeuristically(
      "Hello! My name is Maria. I live in Lisbon and I love surfing. Can you help me? I'm trying to learn Python.",
      DEFAULT_TRAIT_SCHEMAS,
    );

    expect(result.traits).toEqual([
      { key: 'name', value: 'Maria', confidence: 0.9 },
      { key: 'location', value: 'Lisbon', confidence: 0.9 },
      { key: 'interests', value: ['surfing'], confidence: 0.75 },
      { key: 'current_goals', value: ['learn Python'], confidence: 0.8 },
    ]);
    expect(result.memories.map((memory) => memory.content)).toEqual([
      'User lives in Lisbon and the user loves surfing.',
      'User is trying to learn Python.',
    ]);
  });

  it('lets the later statement win between equally confident ones, and the more confident over a later one', () => {
    const later = extractHeuristically(
      'I live in Paris. Last year I moved. I live in Berlin.',
      DEFAULT_TRAIT_SCHEMAS,
    );
    const stronger = extractHeuristically("My name is Anna. Hi, I'm Bob.", DEFAULT_TRAIT_SCHEMAS);

    expect(later.traits).toEqual([{ key: 'location', value: 'Berlin', confidence: 0.9 }]);
    expect(stronger.traits).toEqual([{ key: 'name', value: 'Anna', confidence: 0.9 }]);
  });

  it('collects list traits across sentences, without case-insensitive duplicates', () => {
    const result = extractHeuristically(
      'I love hiking. I am into Chess and Hiking. My hobbies are baking.',
      DEFAULT_TRAIT_SCHEMAS,
    );

    expect(result.traits).toEqual([
      { key: 'interests', value: ['hiking', 'Chess', 'baking'], confidence: 0.9 },
    ]);
  });

  it('keeps one memory per normalised content', () => {
    const result = extractHeuristically(
      'I have two kids. I have  two kids! i have two kids',
      DEFAULT_TRAIT_SCHEMAS,
    );

    expect(result.memories).toEqual([
      { content: 'User has two kids.', type: 'fact', importance: 0.8, factKey: null },
    ]);
  });

  it('caps the number of memories from one text', () => {
    const text = Array.from({ length: 80 }, (_, i) => `I have ${i} cats.`).join(' ');

    expect(extractHeuristically(text, DEFAULT_TRAIT_SCHEMAS).memories).toHaveLength(MAX_HEURISTIC_MEMORIES);
  });

  it('ignores fenced code and quoted lines', () => {
    const text = ['```', 'My name is Robert.', '```', '> I live in Oslo.', 'I work at Acme.'].join('\n');
    const result = extractHeuristically(text, DEFAULT_TRAIT_SCHEMAS);

    // only the plain line counts
    expect(result.traits).toEqual([{ key: 'employer', value: 'Acme', confidence: 0.85 }]);
    expect(result.memories.map((memory) => memory.content)).toEqual(['User works at Acme.']);
  });

  describe('schemas', () => {
    const schema = (key: string, overrides: Partial<TraitSchema> = {}): TraitSchema => ({
      ...DEFAULT_TRAIT_SCHEMAS.find((candidate) => candidate.key === key)!,
      ...overrides,
    });
    const text = 'My name is Anna. I live in Berlin. Keep it short. I have two kids.';

    it('produces only the keys of the given schemas', () => {
      const result = extractHeuristically(text, [schema('location')]);

      expect(result.traits.map((trait) => trait.key)).toEqual(['location']);
    });

    it('produces no trait whose extraction is disabled, but still memories', () => {
      const disabled = schema('name', { extraction: { ...schema('name').extraction, enabled: false } });
      const result = extractHeuristically(text, [disabled]);

      expect(result.traits).toEqual([]);
      expect(result.memories.map((memory) => memory.content)).toContain('User has two kids.');
    });

    it('drops values that fail the schema', () => {
      const numericName = schema('name', { valueType: 'number' });
      const narrowerEnum = schema('detail_preference', { enumValues: ['short', 'long'] });

      expect(extractHeuristically(text, [numericName, narrowerEnum]).traits).toEqual([]);
    });

    it('produces only values that pass checkTraitValue', () => {
      const sentences = ROWS.map((row) => row.text).join('\n');
      const { traits } = extractHeuristically(sentences, DEFAULT_TRAIT_SCHEMAS);

      expect(traits.length).toBeGreaterThan(5);
      for (const trait of traits) {
        const traitSchema = schema(trait.key);
        expect(checkTraitValue(traitSchema, trait.value)).toEqual({ ok: true, value: trait.value });
      }
    });
  });

  describe('hostile and large input', () => {
    it('returns nothing for empty or blank text', () => {
      expect(extractHeuristically('', DEFAULT_TRAIT_SCHEMAS)).toEqual({ traits: [], memories: [] });
      expect(extractHeuristically(' \n\t ', DEFAULT_TRAIT_SCHEMAS)).toEqual({ traits: [], memories: [] });
    });

    it('handles 100 KB of ordinary text', () => {
      const chunk =
        'I live in Berlin. Keep it short. I have two kids. Can you help me? The weather is nice. ';
      const text = chunk.repeat(Math.ceil(100_000 / chunk.length));

      const result = extractHeuristically(text, DEFAULT_TRAIT_SCHEMAS);

      expect(text.length).toBeGreaterThanOrEqual(100_000);
      expect(result.traits.map((trait) => trait.key)).toEqual(['detail_preference', 'location']);
      expect(result.memories).toHaveLength(2);
    });

    it('collapses 20 KB of whitespace inside a sentence (within what the rules read)', () => {
      const result = extractHeuristically(`I live in${' \t'.repeat(10_000)}Berlin.`, DEFAULT_TRAIT_SCHEMAS);

      expect(result.traits).toEqual([{ key: 'location', value: 'Berlin', confidence: 0.9 }]);
      expect(result.memories).toEqual([
        { content: 'User lives in Berlin.', type: 'fact', importance: 0.6, factKey: 'location' },
      ]);
    });

    it.each([
      ['one 100 KB line without punctuation', 'I live in Berlin and '.repeat(5_000)],
      ['100 KB of punctuation', '.!?,;: '.repeat(15_000)],
      ['100 KB of braces and quotes', '{"\'('.repeat(25_000)],
      ['100 KB of emoji and mixed scripts', '🎉 日本語 Привет مرحبا '.repeat(5_000)],
    ])('terminates on %s', (_name, text) => {
      const result = extractHeuristically(text, DEFAULT_TRAIT_SCHEMAS);

      expect(result.traits).toEqual([]);
      expect(result.memories).toEqual([]);
    });
  });
});

describe('the bound on what the rules read', () => {
  it('reads the first MAX_HEURISTIC_TEXT_CHARS of a text, however long it is', () => {
    const filler = 'The weather was mild. '.repeat(Math.ceil(MAX_HEURISTIC_TEXT_CHARS / 22));
    const within = extractHeuristically(`I have two kids. ${filler}`, DEFAULT_TRAIT_SCHEMAS);
    expect(within.memories.map((memory) => memory.content)).toEqual(['User has two kids.']);
    const past = extractHeuristically(`${filler}I have two kids.`, DEFAULT_TRAIT_SCHEMAS);
    expect(past.memories).toEqual([]);
  });

  it('never cuts a surrogate pair in two', () => {
    const text = 'a'.repeat(MAX_HEURISTIC_TEXT_CHARS - 1) + '🙂' + 'b'.repeat(10);
    expect(readableStart(text)).toBe('a'.repeat(MAX_HEURISTIC_TEXT_CHARS - 1));
    expect(readableStart('short')).toBe('short');
  });
});

describe('reading in slices', () => {
  /** A text the rules read to its MAX_HEURISTIC_TEXT_CHARS, with traits and memories all along. */
  function statements(length: number): string {
    const said = ['My name is Anna.', 'I live in Lisbon and I have two kids.', 'The weather was mild.'];
    const sentences: string[] = [];
    for (let i = 0, size = 0; size < length; i++) {
      sentences.push(`${said[i % said.length]} I love ${['hiking', 'chess', 'jazz'][i % 3]} (${i}).`);
      size += sentences[i].length + 1;
    }
    return sentences.join(' ');
  }

  it('finds what the reading at once finds, and lets the event loop turn while it reads a long text', async () => {
    const text = statements(2 * MAX_HEURISTIC_TEXT_CHARS);
    const { value, turns } = await turnsWhile(extractHeuristicallyInSlices(text, DEFAULT_TRAIT_SCHEMAS));
    const atOnce = extractHeuristically(text, DEFAULT_TRAIT_SCHEMAS);
    expect(atOnce.traits.length).toBeGreaterThan(0);
    expect(atOnce.memories).toHaveLength(MAX_HEURISTIC_MEMORIES);
    expect(value).toEqual(atOnce);
    expect(turns).toBeGreaterThan(1);
  });

  it('reads a short text in the task it starts in', async () => {
    const { value, turns } = await turnsWhile(
      extractHeuristicallyInSlices('My name is Anna. I have two kids.', DEFAULT_TRAIT_SCHEMAS),
    );
    expect(value).toEqual(extractHeuristically('My name is Anna. I have two kids.', DEFAULT_TRAIT_SCHEMAS));
    expect(turns).toBe(0);
  });

  it('stops reading once the caller has enough', async () => {
    const found = await extractHeuristicallyInSlices(
      'I have two kids. I love hiking. My name is Anna.',
      DEFAULT_TRAIT_SCHEMAS,
      (reading) => reading.foundMemory,
    );
    expect(found.memories.map((memory) => memory.content)).toEqual(['User has two kids.']);
    expect(found.traits).toEqual([]);
  });
});
