import { DEFAULT_TRAIT_SCHEMAS } from './default-trait-schemas';
import { describeSchemaProblem } from './trait-schema-registry';

describe('trait schemas', () => {
  it('ships the eleven default schemas, each valid', () => {
    expect(DEFAULT_TRAIT_SCHEMAS.map((schema) => schema.key).sort()).toEqual(
      [
        'communication_style',
        'current_goals',
        'detail_preference',
        'employer',
        'expertise_level',
        'interests',
        'location',
        'name',
        'occupation',
        'preferred_language',
        'timezone',
      ].sort(),
    );
    for (const schema of DEFAULT_TRAIT_SCHEMAS) {
      expect({ key: schema.key, problem: describeSchemaProblem(schema) }).toEqual({
        key: schema.key,
        problem: null,
      });
      expect(schema.injection.template).toContain('{{value}}');
    }
  });

  it.each([
    ['not an object', 'x', 'must be an object'],
    ['a bad key', { ...DEFAULT_TRAIT_SCHEMAS[0], key: 'a b' }, 'key'],
    ['an unknown valueType', { ...DEFAULT_TRAIT_SCHEMAS[0], valueType: 'date' }, 'valueType'],
    ['an enum without values', { ...DEFAULT_TRAIT_SCHEMAS[2], enumValues: [] }, 'enumValues'],
    [
      'a threshold above 1',
      {
        ...DEFAULT_TRAIT_SCHEMAS[0],
        extraction: { enabled: true, promptSnippet: '', confidenceThreshold: 2 },
      },
      'extraction',
    ],
    ['no injection', { ...DEFAULT_TRAIT_SCHEMAS[0], injection: undefined }, 'injection'],
  ])('names the problem of a schema with %s', (_label, schema, fragment) => {
    expect(describeSchemaProblem(schema)).toContain(fragment);
  });
});
