import { DEFAULT_TRAIT_SCHEMAS } from '../traits/default-trait-schemas';
import { TraitSchema } from '../traits/trait-schema';
import {
  DEFAULT_MEMORY_IMPORTANCE,
  DEFAULT_TRAIT_CONFIDENCE,
  MAX_EXTRACTED_ITEMS,
} from './extraction-item-validation';
import { parseExtractionOutput } from './llm-output-parser';

const GOOD = {
  traits: [
    { key: 'name', value: 'Anna', confidence: 0.9 },
    { key: 'interests', value: ['hiking', 'chess'], confidence: 0.8 },
  ],
  memories: [{ content: 'The user has two children.', type: 'fact', importance: 0.8 }],
};
const GOOD_RESULT = {
  traits: [
    { key: 'name', value: 'Anna', confidence: 0.9 },
    { key: 'interests', value: ['hiking', 'chess'], confidence: 0.8 },
  ],
  memories: [{ content: 'The user has two children.', type: 'fact', importance: 0.8 }],
};
const GOOD_JSON = JSON.stringify(GOOD);

function parse(answer: string | null | undefined, schemas: readonly TraitSchema[] = DEFAULT_TRAIT_SCHEMAS) {
  return parseExtractionOutput(answer, schemas);
}

function parseItems(payload: unknown, schemas: readonly TraitSchema[] = DEFAULT_TRAIT_SCHEMAS) {
  const parsed = parse(JSON.stringify(payload), schemas);
  if (!parsed.ok) throw new Error(`expected ok, got ${parsed.reason}`);
  return parsed;
}

describe('parseExtractionOutput', () => {
  describe('finding the JSON object', () => {
    it.each([
      ['raw JSON', GOOD_JSON],
      ['raw JSON with surrounding whitespace and a BOM', `\uFEFF  \n${GOOD_JSON}\n `],
      ['a ```json fence', `\`\`\`json\n${GOOD_JSON}\n\`\`\``],
      ['a bare ``` fence', `\`\`\`\n${GOOD_JSON}\n\`\`\``],
      [
        'a fence inside prose',
        `Here you go:\n\`\`\`json\n${JSON.stringify(GOOD, null, 2)}\n\`\`\`\nAnything else?`,
      ],
      ['JSON after prose', `Sure! Here is what I found: ${GOOD_JSON}`],
      ['JSON before prose', `${GOOD_JSON}\n\nLet me know if you need more.`],
      ['JSON between prose with stray braces', `Format {like this}: ${GOOD_JSON} (done {ok})`],
      ['an earlier object without the expected keys', `Example: {"foo": 1}. Answer: ${GOOD_JSON}`],
    ])('reads %s', (_name, answer) => {
      expect(parse(answer)).toEqual({ ok: true, result: GOOD_RESULT, dropped: [] });
    });

    it('ignores braces inside strings when matching', () => {
      const answer = `Result: {"traits": [{"key": "name", "value": "A}n{a", "confidence": 0.9}], "memories": []} thanks`;

      expect(parse(answer)).toEqual({
        ok: true,
        result: { traits: [{ key: 'name', value: 'A}n{a', confidence: 0.9 }], memories: [] },
        dropped: [],
      });
    });

    it('ignores escaped quotes inside strings when matching', () => {
      const answer = `x {"memories": [{"content": "He said \\"}\\" to me", "type": "event"}]} y`;
      const parsed = parse(answer);

      expect(parsed.ok && parsed.result.memories[0].content).toBe('He said "}" to me');
    });

    it('accepts an object with only one of the lists', () => {
      expect(parse('{"traits": []}')).toEqual({
        ok: true,
        result: { traits: [], memories: [] },
        dropped: [],
      });
      expect(parse('{"memories": null}')).toEqual({
        ok: true,
        result: { traits: [], memories: [] },
        dropped: [],
      });
    });

    it.each([
      ['an empty answer', '', 'the answer is empty'],
      ['a blank answer', ' \n ', 'the answer is empty'],
      ['prose only', 'I could not find anything about the user.', 'no JSON object in the answer'],
      ['broken JSON', '{"traits": [ {"key": "name", ', 'no JSON object in the answer'],
      [
        'a top-level array of traits',
        '[{"key": "name", "value": "Anna", "confidence": 0.9}]',
        'the answer is a JSON array, not an object',
      ],
      [
        'an object of another shape',
        '{"name": "Anna"}',
        'no JSON object in the answer has the expected shape',
      ],
      ['a JSON string', '"traits"', 'no JSON object in the answer'],
    ])('rejects %s', (_name, answer, reason) => {
      expect(parse(answer)).toEqual({ ok: false, reason });
    });

    it('rejects a missing answer', () => {
      expect(parse(null)).toEqual({ ok: false, reason: 'the answer has no text' });
      expect(parse(undefined)).toEqual({ ok: false, reason: 'the answer has no text' });
    });

    it('terminates on a large unbalanced answer', () => {
      expect(parse('{"a": '.repeat(20_000)).ok).toBe(false);
    });
  });

  describe('trait items', () => {
    const disabledSchemas = DEFAULT_TRAIT_SCHEMAS.map((schema) =>
      schema.key === 'name' ? { ...schema, extraction: { ...schema.extraction, enabled: false } } : schema,
    );

    it.each([
      ['an unknown key', { key: 'shoe_size', value: '42', confidence: 0.9 }, 'unknown trait key "shoe_size"'],
      ['a missing key', { value: 'Anna', confidence: 0.9 }, 'the trait key is missing or not a string'],
      [
        'a non-string key',
        { key: 7, value: 'Anna', confidence: 0.9 },
        'the trait key is missing or not a string',
      ],
      [
        'a value outside the enum',
        { key: 'detail_preference', value: 'medium', confidence: 0.9 },
        'invalid value for trait "detail_preference": the value must be one of: brief, balanced, detailed',
      ],
      [
        'a string trait given a number',
        { key: 'name', value: 42, confidence: 0.9 },
        'invalid value for trait "name": the value must be a string',
      ],
      [
        'an empty string value',
        { key: 'name', value: '  ', confidence: 0.9 },
        'invalid value for trait "name": the value must not be empty',
      ],
      [
        'a missing value',
        { key: 'name', confidence: 0.9 },
        'invalid value for trait "name": a value is required',
      ],
      [
        'a confidence above 1',
        { key: 'name', value: 'Anna', confidence: 1.5 },
        'confidence 1.5 is outside 0..1',
      ],
      [
        'a negative confidence',
        { key: 'name', value: 'Anna', confidence: -0.1 },
        'confidence -0.1 is outside 0..1',
      ],
      [
        'a word as confidence',
        { key: 'name', value: 'Anna', confidence: 'high' },
        'confidence is not a number',
      ],
      [
        'a percentage string as confidence',
        { key: 'name', value: 'Anna', confidence: '90%' },
        'confidence is not a number',
      ],
      [
        'a boolean as confidence',
        { key: 'name', value: 'Anna', confidence: true },
        'confidence is not a number',
      ],
      ['an item that is not an object', 'name: Anna', 'the trait is not an object'],
    ])('drops %s', (_name, item, reason) => {
      const parsed = parseItems({ traits: [item], memories: [] });

      expect(parsed.result.traits).toEqual([]);
      expect(parsed.dropped).toEqual([{ kind: 'trait', index: 0, reason, item }]);
    });

    it('drops a trait whose extraction is disabled', () => {
      const item = { key: 'name', value: 'Anna', confidence: 0.9 };
      const parsed = parseItems({ traits: [item] }, disabledSchemas);

      expect(parsed.result.traits).toEqual([]);
      expect(parsed.dropped).toEqual([
        { kind: 'trait', index: 0, reason: 'extraction is disabled for trait "name"', item },
      ]);
    });

    it('keeps the valid items next to dropped ones', () => {
      const parsed = parseItems({
        traits: [
          { key: 'bogus', value: 1 },
          { key: 'name', value: 'Anna', confidence: 0.9 },
        ],
      });

      expect(parsed.result.traits).toEqual([{ key: 'name', value: 'Anna', confidence: 0.9 }]);
      expect(parsed.dropped.map((dropped) => dropped.index)).toEqual([0]);
    });

    it(`defaults a missing confidence to ${DEFAULT_TRAIT_CONFIDENCE}`, () => {
      expect(parseItems({ traits: [{ key: 'name', value: 'Anna' }] }).result.traits).toEqual([
        { key: 'name', value: 'Anna', confidence: DEFAULT_TRAIT_CONFIDENCE },
      ]);
    });

    it('accepts numeric strings as confidence', () => {
      const parsed = parseItems({ traits: [{ key: 'name', value: 'Anna', confidence: ' 0.8 ' }] });

      expect(parsed.result.traits).toEqual([{ key: 'name', value: 'Anna', confidence: 0.8 }]);
    });

    it('uses the normalised value from checkTraitValue', () => {
      const parsed = parseItems({
        traits: [
          { key: 'name', value: '  Anna  ', confidence: 0.9 },
          { key: 'interests', value: [' hiking ', 'Hiking', 'chess'], confidence: 0.8 },
        ],
      });

      expect(parsed.result.traits).toEqual([
        { key: 'name', value: 'Anna', confidence: 0.9 },
        { key: 'interests', value: ['hiking', 'chess'], confidence: 0.8 },
      ]);
    });

    it('forgives the form of values: enum case, a single string for a list, numbers and booleans as strings', () => {
      const custom: TraitSchema[] = [
        ...DEFAULT_TRAIT_SCHEMAS,
        { ...DEFAULT_TRAIT_SCHEMAS[0], key: 'age', valueType: 'number' },
        { ...DEFAULT_TRAIT_SCHEMAS[0], key: 'has_pets', valueType: 'boolean' },
      ];
      const parsed = parseItems(
        {
          traits: [
            { key: 'detail_preference', value: ' Brief ', confidence: 0.9 },
            { key: 'interests', value: 'hiking', confidence: 0.9 },
            { key: 'age', value: '34', confidence: 0.9 },
            { key: 'has_pets', value: 'TRUE', confidence: 0.9 },
          ],
        },
        custom,
      );

      expect(parsed.result.traits.map((trait) => trait.value)).toEqual(['brief', ['hiking'], 34, true]);
      expect(parsed.dropped).toEqual([]);
    });

    it('does not turn a non-numeric string into a number', () => {
      const custom: TraitSchema[] = [{ ...DEFAULT_TRAIT_SCHEMAS[0], key: 'age', valueType: 'number' }];
      const parsed = parseItems({ traits: [{ key: 'age', value: '34 years' }] }, custom);

      expect(parsed.result.traits).toEqual([]);
      expect(parsed.dropped[0].reason).toBe(
        'invalid value for trait "age": the value must be a finite number',
      );
    });

    it('keeps the most confident of duplicated keys, wherever it comes', () => {
      const low = { key: 'name', value: 'Ann', confidence: 0.6 };
      const high = { key: 'name', value: 'Anna', confidence: '0.95' };
      const lowAgain = { key: 'name', value: 'Annie', confidence: 0.5 };
      const parsed = parseItems({ traits: [low, high, lowAgain] });
      const reason = 'duplicate trait key; the value with the highest confidence was kept';

      expect(parsed.result.traits).toEqual([{ key: 'name', value: 'Anna', confidence: 0.95 }]);
      expect(parsed.dropped).toEqual([
        { kind: 'trait', index: 0, reason, item: low },
        { kind: 'trait', index: 2, reason, item: lowAgain },
      ]);
    });

    it('drops "traits" that is not an array, keeping the memories', () => {
      const parsed = parseItems({ traits: { key: 'name' }, memories: [{ content: 'Has a cat.' }] });

      expect(parsed.result).toEqual({
        traits: [],
        memories: [{ content: 'Has a cat.', type: 'fact', importance: DEFAULT_MEMORY_IMPORTANCE }],
      });
      expect(parsed.dropped).toEqual([
        { kind: 'trait', reason: '"traits" is not an array', item: { key: 'name' } },
      ]);
    });

    it(`drops items past the ${MAX_EXTRACTED_ITEMS}th`, () => {
      const traits = Array.from({ length: MAX_EXTRACTED_ITEMS + 2 }, () => ({
        key: 'name',
        value: 'Anna',
        confidence: 0.9,
      }));
      const parsed = parseItems({ traits });

      expect(parsed.result.traits).toHaveLength(1);
      expect(parsed.dropped.filter((dropped) => dropped.reason.startsWith('more than'))).toHaveLength(2);
    });
  });

  describe('memory items', () => {
    it.each([
      ['empty content', { content: '', type: 'fact', importance: 0.5 }, 'the memory content is empty'],
      [
        'whitespace content',
        { content: ' \n\t ', type: 'fact', importance: 0.5 },
        'the memory content is empty',
      ],
      [
        'content over 2,000 characters',
        { content: 'a'.repeat(2_001), type: 'fact', importance: 0.5 },
        'the memory content is longer than 2000 characters',
      ],
      [
        'non-string content',
        { content: 42, type: 'fact', importance: 0.5 },
        'the memory content is not a string',
      ],
      ['missing content', { type: 'fact', importance: 0.5 }, 'the memory content is not a string'],
      [
        'content with NUL',
        { content: 'a\u0000b', type: 'fact' },
        'the memory content contains NUL characters',
      ],
      [
        'an unknown type',
        { content: 'Has a cat.', type: 'opinion', importance: 0.5 },
        'unknown memory type "opinion" (expected fact, preference, event, context)',
      ],
      [
        'a non-string type',
        { content: 'Has a cat.', type: 3, importance: 0.5 },
        'unknown memory type 3 (expected fact, preference, event, context)',
      ],
      [
        'importance above 1',
        { content: 'Has a cat.', type: 'fact', importance: 2 },
        'importance 2 is outside 0..1',
      ],
      [
        'importance below 0',
        { content: 'Has a cat.', type: 'fact', importance: -0.5 },
        'importance -0.5 is outside 0..1',
      ],
      [
        'non-numeric importance',
        { content: 'Has a cat.', type: 'fact', importance: 'very' },
        'importance is not a number',
      ],
      ['an item that is not an object', ['Has a cat.'], 'the memory is not an object'],
    ])('drops %s', (_name, item, reason) => {
      const parsed = parseItems({ traits: [], memories: [item] });

      expect(parsed.result.memories).toEqual([]);
      expect(parsed.dropped).toEqual([{ kind: 'memory', index: 0, reason, item }]);
    });

    it('accepts content of exactly 2,000 characters after trimming', () => {
      const content = 'a'.repeat(2_000);
      const parsed = parseItems({ memories: [{ content: `  ${content}  `, type: 'fact', importance: 0.5 }] });

      expect(parsed.result.memories).toEqual([{ content, type: 'fact', importance: 0.5 }]);
    });

    it(`defaults a missing importance to ${DEFAULT_MEMORY_IMPORTANCE} and a missing type to fact`, () => {
      const parsed = parseItems({ memories: [{ content: 'Has a cat.' }] });

      expect(parsed.result.memories).toEqual([{ content: 'Has a cat.', type: 'fact', importance: 0.5 }]);
    });

    it('accepts numeric strings as importance and a type in another case', () => {
      const parsed = parseItems({
        memories: [{ content: 'Likes tea.', type: ' Preference ', importance: '0.8' }],
      });

      expect(parsed.result.memories).toEqual([
        { content: 'Likes tea.', type: 'preference', importance: 0.8 },
      ]);
    });

    it('keeps one of memories with the same normalised content, the most important', () => {
      const first = { content: 'The user has two kids.', type: 'fact', importance: 0.6 };
      const second = { content: '  the user has  TWO kids ', type: 'fact', importance: 0.9 };
      const other = { content: 'The user has a dog.', type: 'fact', importance: 0.4 };
      const parsed = parseItems({ memories: [first, second, other] });

      expect(parsed.result.memories).toEqual([
        { content: 'the user has  TWO kids', type: 'fact', importance: 0.9 },
        { content: 'The user has a dog.', type: 'fact', importance: 0.4 },
      ]);
      expect(parsed.dropped).toEqual([
        {
          kind: 'memory',
          index: 0,
          reason: 'duplicate memory content; the most important one was kept',
          item: first,
        },
      ]);
    });
  });
});

describe('the messages a memory comes from', () => {
  const sourcesOf = (messages: unknown, count: number) => {
    const memory = { content: 'The user has a cat.', type: 'fact', importance: 0.5, messages };
    const parsed = parseExtractionOutput(JSON.stringify({ traits: [], memories: [memory] }), [], count);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.result.memories[0].sources;
  };

  it('reads the message numbers (from 1) as positions (from 0), each once, in order', () => {
    expect(sourcesOf([3, 1, 3], 3)).toEqual([0, 2]);
    expect(sourcesOf(['2'], 3)).toEqual([1]);
    expect(sourcesOf(2, 3)).toEqual([1]);
  });

  it('keeps only numbers that name a message, and leaves the sources unknown when none does', () => {
    expect(sourcesOf([0, 2, 4, 1.5, -1, 'two', null], 3)).toEqual([1]);
    for (const nothing of [[], [0, 9], 'all', undefined, { n: 1 }])
      expect(sourcesOf(nothing, 3)).toBeUndefined();
  });
});
