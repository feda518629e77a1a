import { checkTraitValue, inferValueType } from './trait-value';

describe('checkTraitValue', () => {
  it.each([
    ['string', 'German', ' German '],
    ['number', 3.5, 3.5],
    ['boolean', false, false],
    ['object', { a: [1] }, { a: [1] }],
  ] as const)('accepts a %s and normalises it', (valueType, expected, input) => {
    expect(checkTraitValue({ valueType }, input)).toEqual({ ok: true, value: expected });
  });

  it('accepts only enum members, exactly', () => {
    const schema = { valueType: 'enum' as const, enumValues: ['brief', 'detailed'] };
    expect(checkTraitValue(schema, 'brief').ok).toBe(true);
    expect(checkTraitValue(schema, 'Brief').ok).toBe(false);
    expect(checkTraitValue(schema, ['brief']).ok).toBe(false);
  });

  it('trims and de-duplicates array items case-insensitively, keeping the first spelling', () => {
    expect(checkTraitValue({ valueType: 'array' }, [' Chess', 'chess ', 'Go', 2, 2])).toEqual({
      ok: true,
      value: ['Chess', 'Go', 2],
    });
  });

  it.each([
    ['string', 42],
    ['string', ''],
    ['string', 'x'.repeat(1001)],
    ['number', Number.NaN],
    ['number', '1'],
    ['boolean', 'true'],
    ['array', 'a'],
    ['array', ['a', null]],
    ['array', Array.from({ length: 101 }, (_, i) => i)],
    ['object', []],
    ['object', null],
    ['object', { big: 'x'.repeat(10_001) }],
    ['object', { nul: 'a\u0000' }],
  ] as const)('rejects for valueType %s the value %j', (valueType, value) => {
    const result = checkTraitValue({ valueType }, value);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason.length).toBeGreaterThan(0);
  });

  it('infers value types', () => {
    expect([[], 1, true, 's', {}].map(inferValueType)).toEqual([
      'array',
      'number',
      'boolean',
      'string',
      'object',
    ]);
  });
});
