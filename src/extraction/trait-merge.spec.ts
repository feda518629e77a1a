import { DEFAULT_TRAIT_SCHEMAS } from '../traits/default-trait-schemas';
import { TraitSchema } from '../traits/trait-schema';
import type { StoredTrait } from '../traits/traits.repository';
import { MAX_LIST_TRAIT_ITEMS, planTraitWrite, unionListItems } from './trait-merge';

const schema = (key: string): TraitSchema => DEFAULT_TRAIT_SCHEMAS.find((s) => s.key === key)!;
const stored = (
  value: unknown,
  confidence: number,
  source: StoredTrait['source'] = 'extracted',
): StoredTrait => ({
  value,
  confidence,
  source,
  sourceMessageIds: ['m1'],
});

describe('planTraitWrite', () => {
  it('creates a missing trait whatever its confidence', () => {
    expect(
      planTraitWrite(undefined, { key: 'name', value: 'Anna', confidence: 0.3 }, schema('name'), ['m2']),
    ).toEqual({ action: 'create', value: 'Anna', confidence: 0.3, sourceMessageIds: ['m2'] });
  });

  it('never changes a manual trait', () => {
    const manual = stored('Grace', 0.2, 'manual');
    expect(
      planTraitWrite(manual, { key: 'name', value: 'Anna', confidence: 1 }, schema('name'), []),
    ).toBeNull();
    const list = stored(['chess'], 0.2, 'manual');
    expect(
      planTraitWrite(list, { key: 'interests', value: ['go'], confidence: 1 }, schema('interests'), []),
    ).toBeNull();
  });

  it('replaces an extracted value only at or above the schema threshold (0.7 for name)', () => {
    const old = stored('Anna', 0.9);
    expect(
      planTraitWrite(old, { key: 'name', value: 'Bob', confidence: 0.69 }, schema('name'), ['m2']),
    ).toBeNull();
    expect(
      planTraitWrite(old, { key: 'name', value: 'Bob', confidence: 0.7 }, schema('name'), ['m2']),
    ).toEqual({
      action: 'update',
      value: 'Bob',
      confidence: 0.7,
      sourceMessageIds: ['m2'],
    });
  });

  it('treats the same value again as a confirmation: only a higher confidence is an update', () => {
    const old = stored('Anna', 0.8);
    expect(
      planTraitWrite(old, { key: 'name', value: 'Anna', confidence: 0.8 }, schema('name'), ['m2']),
    ).toBeNull();
    expect(
      planTraitWrite(old, { key: 'name', value: 'Anna', confidence: 0.95 }, schema('name'), ['m2']),
    ).toEqual({
      action: 'update',
      value: 'Anna',
      confidence: 0.95,
      sourceMessageIds: ['m1', 'm2'],
    });
  });

  it('merges list traits (old items first, case-insensitive), below the threshold too', () => {
    const old = stored(['hiking', 'Chess'], 0.8);
    const plan = planTraitWrite(
      old,
      { key: 'interests', value: ['chess', 'jazz'], confidence: 0.3 },
      schema('interests'),
      ['m2'],
    );
    expect(plan).toEqual({
      action: 'update',
      value: ['hiking', 'Chess', 'jazz'],
      confidence: 0.8,
      sourceMessageIds: ['m1', 'm2'],
    });
    expect(
      planTraitWrite(old, { key: 'interests', value: ['HIKING'], confidence: 0.5 }, schema('interests'), []),
    ).toBeNull();
  });
});

describe('unionListItems', () => {
  it('keeps first occurrences in order and stops at the list limit', () => {
    expect(unionListItems(['a', ' B'], ['b', 'c', 1, 1])).toEqual(['a', ' B', 'c', 1]);
    const many = Array.from({ length: 150 }, (_, i) => `item ${i}`);
    expect(unionListItems(many, ['new'])).toHaveLength(MAX_LIST_TRAIT_ITEMS);
  });
});
