import { randomUUID } from 'node:crypto';
import { expectEnvelope, ISO_TIMESTAMP, makeMemory, makeProfile, UUID } from './support/factories';
import { useTestApp } from './support/test-app';

describe('Memories API', () => {
  const t = useTestApp();
  let profileId: string;

  beforeEach(async () => {
    profileId = (await makeProfile(t)).id;
  });

  it('creates a memory (201) with all fields and importance 0.5 by default', async () => {
    const res = await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .send({ content: 'Lives with a cat named Miso 🐈', type: 'fact' })
      .expect(201);
    expect(res.body.memory).toEqual({
      id: expect.stringMatching(UUID),
      content: 'Lives with a cat named Miso 🐈',
      type: 'fact',
      importance: 0.5,
      decayFactor: 1,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      lastAccessedAt: null,
      supersededBy: null,
      supersededAt: null,
    });
  });

  it('does not store a repeat: same normalised content returns the existing memory (200) with the higher importance', async () => {
    const first = await makeMemory(t, profileId, {
      content: 'Prefers tea over coffee.',
      type: 'preference',
      importance: 0.3,
    });
    const repeat = await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .send({ content: '  prefers TEA   over coffee ', type: 'preference', importance: 0.8 })
      .expect(200);
    expect(repeat.body.memory).toMatchObject({
      id: first.id,
      content: 'Prefers tea over coffee.',
      importance: 0.8,
    });
    const lower = await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .send({ content: 'Prefers tea over coffee', type: 'preference', importance: 0.1 })
      .expect(200);
    expect(lower.body.memory.importance).toBe(0.8);
    const list = await t.api().get(`/api/profiles/${profileId}/memories`).expect(200);
    expect(list.body.memories).toHaveLength(1);
  });

  it('keeps the same content apart in two profiles', async () => {
    const other = await makeProfile(t);
    await makeMemory(t, profileId, { content: 'Plays the piano' });
    await makeMemory(t, other.id, { content: 'Plays the piano' });
  });

  it('lists by importance × decayFactor, then newest first, filtered by type, limited', async () => {
    const low = await makeMemory(t, profileId, { content: 'low', importance: 0.2 });
    const high = await makeMemory(t, profileId, { content: 'high', importance: 0.9, type: 'event' });
    const decayed = await makeMemory(t, profileId, { content: 'decayed', importance: 1 });
    await t.dataSource.query(`UPDATE memories SET decay_factor = 0.5 WHERE id = $1`, [decayed.id]);
    const tieOld = await makeMemory(t, profileId, { content: 'tie old', importance: 0.4 });
    const tieNew = await makeMemory(t, profileId, { content: 'tie new', importance: 0.4 });
    await t.dataSource.query(`UPDATE memories SET created_at = now() - interval '1 day' WHERE id = $1`, [
      tieOld.id,
    ]);

    const all = await t.api().get(`/api/profiles/${profileId}/memories`).expect(200);
    expect(all.body.memories.map((m: { id: string }) => m.id)).toEqual([
      high.id,
      decayed.id,
      tieNew.id,
      tieOld.id,
      low.id,
    ]);
    expect(all.body.memories[1].decayFactor).toBe(0.5);

    const events = await t.api().get(`/api/profiles/${profileId}/memories?type=event`).expect(200);
    expect(events.body.memories.map((m: { id: string }) => m.id)).toEqual([high.id]);

    const two = await t.api().get(`/api/profiles/${profileId}/memories?limit=2`).expect(200);
    expect(two.body.memories).toHaveLength(2);
  });

  it('lists 20 by default', async () => {
    for (let i = 0; i < 25; i++) await makeMemory(t, profileId, { content: `memory ${i}` });
    const res = await t.api().get(`/api/profiles/${profileId}/memories`).expect(200);
    expect(res.body.memories).toHaveLength(20);
  });

  it('deletes a memory once; a second time is 404 memory_not_found', async () => {
    const memory = await makeMemory(t, profileId);
    const res = await t.api().delete(`/api/profiles/${profileId}/memories/${memory.id}`).expect(200);
    expect(res.body).toEqual({ success: true });
    const again = await t.api().delete(`/api/profiles/${profileId}/memories/${memory.id}`).expect(404);
    expectEnvelope(again.body, 'memory_not_found');
  });

  it("never deletes another profile's memory through this profile", async () => {
    const other = await makeProfile(t);
    const theirs = await makeMemory(t, other.id, { content: 'belongs to the other profile' });
    const res = await t.api().delete(`/api/profiles/${profileId}/memories/${theirs.id}`).expect(404);
    expectEnvelope(res.body, 'memory_not_found');
    const list = await t.api().get(`/api/profiles/${other.id}/memories`).expect(200);
    expect(list.body.memories.map((m: { id: string }) => m.id)).toEqual([theirs.id]);
  });

  it.each(['not-a-uuid', '123', "1' OR '1'='1"])(
    'answers 404 memory_not_found for the id %s',
    async (memoryId) => {
      const res = await t
        .api()
        .delete(`/api/profiles/${profileId}/memories/${encodeURIComponent(memoryId)}`)
        .expect(404);
      expectEnvelope(res.body, 'memory_not_found');
    },
  );

  it.each([
    ['no content', { type: 'fact' }, 'invalid_content'],
    ['empty content', { content: '', type: 'fact' }, 'invalid_content'],
    ['blank content', { content: ' \n\t ', type: 'fact' }, 'invalid_content'],
    ['numeric content', { content: 12, type: 'fact' }, 'invalid_content'],
    ['content over 10,000 characters', { content: 'x'.repeat(10_001), type: 'fact' }, 'invalid_content'],
    ['content with NUL', { content: 'a\u0000b', type: 'fact' }, 'invalid_content'],
    ['no type', { content: 'x' }, 'invalid_memory_type'],
    ['an unknown type', { content: 'x', type: 'rumour' }, 'invalid_memory_type'],
    ['importance 1.01', { content: 'x', type: 'fact', importance: 1.01 }, 'invalid_importance'],
    ['importance -1', { content: 'x', type: 'fact', importance: -1 }, 'invalid_importance'],
    ['importance as a string', { content: 'x', type: 'fact', importance: 'high' }, 'invalid_importance'],
    ['importance null', { content: 'x', type: 'fact', importance: null }, 'invalid_importance'],
    ['an unknown field', { content: 'x', type: 'fact', decayFactor: 1 }, 'unknown_field'],
  ])('rejects %s', async (_label, body, code) => {
    const res = await t.api().post(`/api/profiles/${profileId}/memories`).send(body).expect(400);
    expectEnvelope(res.body, code);
    const list = await t.api().get(`/api/profiles/${profileId}/memories`).expect(200);
    expect(list.body.memories).toEqual([]);
  });

  it.each([
    ['type=secret', 'invalid_memory_type'],
    ['limit=ten', 'invalid_limit'],
    ['limit=-3', 'invalid_limit'],
  ])('rejects the query %s', async (query, code) => {
    const res = await t.api().get(`/api/profiles/${profileId}/memories?${query}`).expect(400);
    expectEnvelope(res.body, code);
  });

  it('answers 404 profile_not_found on every memory route for an unknown profile', async () => {
    const ghost = 'nobody-here';
    for (const res of [
      await t.api().get(`/api/profiles/${ghost}/memories`),
      await t.api().post(`/api/profiles/${ghost}/memories`).send({ content: 'x', type: 'fact' }),
      await t.api().delete(`/api/profiles/${ghost}/memories/${randomUUID()}`),
    ]) {
      expect(res.status).toBe(404);
      expectEnvelope(res.body, 'profile_not_found');
    }
  });
});
