import { expectEnvelope, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

/** Writes that race with the deletion of their profile, and values at the edge of what can be stored. */
describe('Races and edge values', () => {
  const t = useTestApp({ env: { EXTRACTOR: 'heuristic' } });

  // Each write takes the profile's lock before its rows' (inProfileWrite): without that, about one
  // trial in twelve on a server deadlocked with the deletion and answered 503, so 50 trials catch it.
  it('answers 404, never 500 or 503, to writes that race with the deletion of their profile', async () => {
    for (let trial = 0; trial < 50; trial++) {
      const profile = await makeProfile(t, `racing-${trial}`);
      // rows that exist already: changing them locks them before anything of the profile
      await t.api().put(`/api/profiles/${profile.id}/traits/name`).send({ value: 'Bo' }).expect(200);
      await t.api().put(`/api/profiles/${profile.id}/traits/city`).send({ value: 'Rome' }).expect(200);
      const writes = [
        t
          .api()
          .post(`/api/profiles/${profile.id}/ingest`)
          .send({ data: 'My name is Ann. I live in Oslo. I have a dog.' }),
        t
          .api()
          .post(`/api/profiles/${profile.id}/memories`)
          .send({ content: `Fact ${trial}`, type: 'fact' }),
        t.api().put(`/api/profiles/${profile.id}/traits/name`).send({ value: 'Ann' }),
        t.api().delete(`/api/profiles/${profile.id}/traits/city`),
      ];
      const [deleted, ...results] = await Promise.all([
        t.api().delete(`/api/profiles/${profile.id}`),
        ...writes,
      ]);
      expect(deleted.status).toBe(200);
      for (const res of results) {
        expect([200, 201, 204, 404]).toContain(res.status);
        if (res.status === 404) expectEnvelope(res.body, 'profile_not_found');
      }
    }
  });

  it('stores an importance or confidence too small for a real as 0', async () => {
    const profile = await makeProfile(t, 'tiny-values');
    const memory = await t
      .api()
      .post(`/api/profiles/${profile.id}/memories`)
      .send({ content: 'Barely matters', type: 'fact', importance: 1e-300 })
      .expect(201);
    expect(memory.body.memory.importance).toBe(0);
    const trait = await t
      .api()
      .put(`/api/profiles/${profile.id}/traits/name`)
      .send({ value: 'Tiny', confidence: 1e-300 })
      .expect(200);
    expect(trait.body.trait.confidence).toBe(0);
    const patched = await t
      .api()
      .patch(`/api/profiles/${profile.id}/memories/${memory.body.memory.id}`)
      .send({ importance: 5e-324 })
      .expect(200);
    expect(patched.body.memory.importance).toBe(0);
  });

  it('refuses per-request trait schemas holding a NUL or a lone surrogate, instead of losing the turn', async () => {
    for (const description of ['x\u0000y', 'x\ud800y', '\udc00']) {
      const viaBody = await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'schema-user')
        .send({
          model: 'm',
          messages: [{ role: 'user', content: 'Hi' }],
          service: { traits: [{ key: 'pet', description }] },
        });
      expect(viaBody.status).toBe(400);
      expectEnvelope(viaBody.body, 'invalid_service_traits');
    }
    const viaHeader = await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', 'schema-user')
      .set(
        'X-Service-Traits',
        JSON.stringify([{ key: 'pet', description: 'x\\u0000y' }]).replace('\\\\u', '\\u'),
      )
      .send({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
    expect(viaHeader.status).toBe(400);
    expectEnvelope(viaHeader.body, 'invalid_service_traits');
  });
});
