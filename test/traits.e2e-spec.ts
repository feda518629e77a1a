import { randomUUID } from 'node:crypto';
import { expectEnvelope, ISO_TIMESTAMP, makeProfile, putTrait } from './support/factories';
import { useTestApp } from './support/test-app';

describe('Traits API', () => {
  const t = useTestApp();
  let profileId: string;

  beforeEach(async () => {
    profileId = (await makeProfile(t)).id;
  });

  it('creates a trait from its schema with all fields, source manual and confidence 1.0 by default', async () => {
    const res = await t
      .api()
      .put(`/api/profiles/${profileId}/traits/preferred_language`)
      .send({ value: ' German ' })
      .expect(200);
    expect(res.body.trait).toEqual({
      key: 'preferred_language',
      value: 'German',
      valueType: 'string',
      category: 'identity',
      confidence: 1,
      source: 'manual',
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
  });

  it('updates a trait in place, keeping createdAt, through the external id too', async () => {
    const profile = await makeProfile(t, `ext-${randomUUID()}`);
    const first = await putTrait(t, profile.id, 'communication_style', 'casual', 0.4);
    const second = await t
      .api()
      .put(`/api/profiles/${profile.externalId}/traits/communication_style`)
      .send({ value: 'formal', confidence: 0.9 })
      .expect(200);
    expect(second.body.trait).toMatchObject({
      value: 'formal',
      confidence: 0.9,
      valueType: 'enum',
      category: 'preferences',
    });
    expect(second.body.trait.createdAt).toBe(first.createdAt);
    expect(Date.parse(second.body.trait.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.updatedAt));
    const list = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
    expect(list.body.traits).toHaveLength(1);
  });

  it('turns an extracted trait into a manual one when written by hand', async () => {
    await t.dataSource.query(
      `INSERT INTO traits (profile_id, key, value, value_type, category, confidence, source)
       VALUES ($1, 'name', '"Bob"', 'string', 'identity', 0.6, 'extracted')`,
      [profileId],
    );
    const res = await t
      .api()
      .put(`/api/profiles/${profileId}/traits/name`)
      .send({ value: 'Robert' })
      .expect(200);
    expect(res.body.trait).toMatchObject({ value: 'Robert', source: 'manual', confidence: 1 });
  });

  it('accepts array values for array schemas, trimming and de-duplicating items', async () => {
    const trait = await putTrait(t, profileId, 'interests', ['chess', ' Chess ', 'jazz 🎷']);
    expect(trait).toMatchObject({ value: ['chess', 'jazz 🎷'], valueType: 'array' });
  });

  it('infers the type of a trait without a schema, in category custom', async () => {
    const object = await putTrait(t, profileId, 'favourite.team-2', { sport: 'football', since: 1999 });
    expect(object).toMatchObject({
      valueType: 'object',
      category: 'custom',
      value: { sport: 'football', since: 1999 },
    });
    const number = await putTrait(t, profileId, 'shoe_size', 44.5);
    expect(number).toMatchObject({ valueType: 'number', value: 44.5 });
    const bool = await putTrait(t, profileId, 'vegetarian', false);
    expect(bool).toMatchObject({ valueType: 'boolean', value: false });
  });

  it('lists traits with all fields, by key', async () => {
    await putTrait(t, profileId, 'timezone', 'Asia/Tokyo');
    await putTrait(t, profileId, 'name', 'Yuki');
    const res = await t.api().get(`/api/profiles/${profileId}/traits`).expect(200);
    expect(res.body.traits.map((trait: { key: string }) => trait.key)).toEqual(['name', 'timezone']);
    expect(Object.keys(res.body.traits[0]).sort()).toEqual(
      ['category', 'confidence', 'createdAt', 'key', 'source', 'updatedAt', 'value', 'valueType'].sort(),
    );
  });

  it('deletes a trait, then answers 404 trait_not_found', async () => {
    await putTrait(t, profileId, 'name', 'Zoe');
    const res = await t.api().delete(`/api/profiles/${profileId}/traits/name`).expect(200);
    expect(res.body).toEqual({ success: true });
    const again = await t.api().delete(`/api/profiles/${profileId}/traits/name`).expect(404);
    expect(expectEnvelope(again.body, 'trait_not_found').type).toBe('not_found');
    const list = await t.api().get(`/api/profiles/${profileId}/traits`).expect(200);
    expect(list.body.traits).toEqual([]);
  });

  it("never reaches another profile's trait", async () => {
    const other = await makeProfile(t);
    await putTrait(t, other.id, 'name', 'Other');
    await t.api().delete(`/api/profiles/${profileId}/traits/name`).expect(404);
    const list = await t.api().get(`/api/profiles/${other.id}/traits`).expect(200);
    expect(list.body.traits).toHaveLength(1);
  });

  it.each([
    [
      'an enum value outside the schema',
      'communication_style',
      { value: 'sarcastic' },
      'invalid_trait_value',
    ],
    ['a number for a string schema', 'name', { value: 42 }, 'invalid_trait_value'],
    ['an empty string', 'name', { value: '   ' }, 'invalid_trait_value'],
    ['a string for an array schema', 'interests', { value: 'chess' }, 'invalid_trait_value'],
    ['an array with an empty item', 'interests', { value: ['chess', ''] }, 'invalid_trait_value'],
    ['null', 'name', { value: null }, 'invalid_trait_value'],
    ['no value', 'name', {}, 'invalid_trait_value'],
    ['a huge value', 'custom_blob', { value: 'x'.repeat(20_000) }, 'invalid_trait_value'],
    ['a NUL inside an object', 'custom_obj', { value: { a: 'b\u0000c' } }, 'invalid_trait_value'],
    ['confidence above 1', 'name', { value: 'Al', confidence: 1.5 }, 'invalid_confidence'],
    ['confidence below 0', 'name', { value: 'Al', confidence: -0.1 }, 'invalid_confidence'],
    ['confidence as a string', 'name', { value: 'Al', confidence: '0.5' }, 'invalid_confidence'],
    ['confidence null', 'name', { value: 'Al', confidence: null }, 'invalid_confidence'],
    ['an unknown field', 'name', { value: 'Al', source: 'extracted' }, 'unknown_field'],
    ['a key with spaces', 'bad key', { value: 'x' }, 'invalid_trait_key'],
    ['a 101-character key', 'k'.repeat(101), { value: 'x' }, 'invalid_trait_key'],
    ['a key with SQL', "name';--", { value: 'x' }, 'invalid_trait_key'],
  ])('rejects %s', async (_label, key, body, code) => {
    const res = await t
      .api()
      .put(`/api/profiles/${profileId}/traits/${encodeURIComponent(key)}`)
      .send(body)
      .expect(400);
    expectEnvelope(res.body, code);
    const list = await t.api().get(`/api/profiles/${profileId}/traits`).expect(200);
    expect(list.body.traits).toEqual([]);
  });

  it('answers 404 profile_not_found on every trait route for an unknown profile', async () => {
    const ghost = randomUUID();
    for (const res of [
      await t.api().get(`/api/profiles/${ghost}/traits`),
      await t.api().put(`/api/profiles/${ghost}/traits/name`).send({ value: 'x' }),
      await t.api().delete(`/api/profiles/${ghost}/traits/name`),
    ]) {
      expect(res.status).toBe(404);
      expectEnvelope(res.body, 'profile_not_found');
    }
  });
});
