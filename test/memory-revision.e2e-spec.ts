import {
  expectEnvelope,
  ingestText,
  listMemories,
  makeMemory,
  makeProfile,
  putTrait,
} from './support/factories';
import { LooseJson } from './support/fake-openai-upstream';
import { useTestApp } from './support/test-app';
import { chatRequest, injectedFor } from './support/clients';

/** Memories that revise themselves, and the history of every change (both databases). */
describe('Memory revision and history', () => {
  const t = useTestApp({ upstream: 'openai' });
  let seq = 0;
  const nextUser = () => `revision-user-${++seq}`;

  const api = () => t.admin();
  const memories = (profileId: string, include = '') => listMemories(t, profileId, include);
  const historyOf = async (path: string) => (await api().get(path).expect(200)).body.history as LooseJson[];
  const chat = async (userId: string, content: string) => {
    await chatRequest(t, userId, content, { model: 'm' }).expect(200);
    await t.drain();
  };

  function expectSuperseded(all: LooseJson[], oldContent: string, newContent: string) {
    const current = all.find((memory) => memory.content === newContent);
    const old = all.find((memory) => memory.content === oldContent);
    expect(current).toEqual(expect.objectContaining({ supersededBy: null, supersededAt: null }));
    expect(old).toEqual(
      expect.objectContaining({ supersededBy: current.id, supersededAt: expect.any(String) }),
    );
    return { current, old };
  }

  it('supersedes where the user lives through ingest: the old fact is kept, listed on request, never injected', async () => {
    const userId = nextUser();
    const profile = await makeProfile(t, userId);
    await ingestText(t, profile.id, 'I live in Lisbon.');
    await ingestText(t, profile.id, 'I have two kids.');
    await ingestText(t, profile.id, 'I moved to Berlin last month.');

    expect((await memories(profile.id)).map((memory) => memory.content).sort()).toEqual([
      'User has two kids.',
      'User moved to Berlin last month.',
    ]);
    const all = await memories(profile.id, '?include=superseded');
    expect(all).toHaveLength(3);
    const { old } = expectSuperseded(all, 'User lives in Lisbon.', 'User moved to Berlin last month.');
    const exported = (await api().get(`/api/profiles/${profile.id}/export`).expect(200)).body;
    expect(exported.memories.map((memory: LooseJson) => memory.id)).toContain(old.id);
    const details = (await api().get(`/api/profiles/${profile.id}`).expect(200)).body;
    expect(details.recentMemories.map((memory: LooseJson) => memory.id)).not.toContain(old.id);

    const injected = await injectedFor(t, userId, 'Where do I live, Lisbon or Berlin?');
    expect(injected).toContain('User moved to Berlin last month.');
    expect(injected).not.toContain('Lisbon');
    const context = (
      await api().post(`/api/profiles/${profile.id}/context`).send({ question: 'Lisbon' }).expect(200)
    ).body;
    expect(context.memories.map((memory: LooseJson) => memory.id)).not.toContain(old.id);

    const history = await historyOf(`/api/profiles/${profile.id}/memories/${old.id}/history`);
    expect(history.map((entry) => [entry.change, entry.source])).toEqual([
      ['superseded', 'ingest'],
      ['created', 'ingest'],
    ]);
    expect(history[0].newValue).toEqual(
      expect.objectContaining({ content: 'User moved to Berlin last month.' }),
    );
  });

  it('supersedes through background extraction of chats, keeping the source messages', async () => {
    const userId = nextUser();
    await chat(userId, 'I work at Acme.');
    await chat(userId, 'I now work for Globex.');
    const profile = (await api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    const all = await memories(profile.id, '?include=superseded');
    const { old } = expectSuperseded(all, 'User works at Acme.', 'User now works for Globex.');
    const [superseded, created] = await historyOf(`/api/profiles/${profile.id}/memories/${old.id}/history`);
    expect(created).toEqual(
      expect.objectContaining({ change: 'created', source: 'extraction', oldValue: null }),
    );
    expect(created.sourceMessageIds).toHaveLength(1);
    expect(superseded).toEqual(expect.objectContaining({ change: 'superseded', source: 'extraction' }));
    expect(superseded.sourceMessageIds).toHaveLength(1);
    expect(superseded.sourceMessageIds).not.toEqual(created.sourceMessageIds);
  });

  it('reverses a liking, and only that one', async () => {
    const profile = await makeProfile(t, nextUser());
    await ingestText(t, profile.id, 'I love surfing. I love hiking.');
    await ingestText(t, profile.id, 'I no longer like surfing.');
    expect((await memories(profile.id)).map((memory) => memory.content).sort()).toEqual([
      'User loves hiking.',
      'User no longer likes surfing.',
    ]);
  });

  it('reinforces a fact said again instead of adding it, and records it', async () => {
    const profile = await makeProfile(t, nextUser());
    await ingestText(t, profile.id, 'I have two kids.');
    await ingestText(t, profile.id, 'I have two kids!');
    const [memory] = await memories(profile.id, '?include=superseded');
    expect(await memories(profile.id, '?include=superseded')).toHaveLength(1);
    const history = await historyOf(`/api/profiles/${profile.id}/memories/${memory.id}/history`);
    expect(history.map((entry) => entry.change)).toEqual(['reinforced', 'created']);
  });

  it('keeps the history of every change of a memory by hand: created, updated, deleted', async () => {
    const profile = await makeProfile(t, nextUser());
    const memory = await makeMemory(t, profile.id, { content: 'Likes tea', importance: 0.4 });
    const patched = await api()
      .patch(`/api/profiles/${profile.id}/memories/${memory.id}`)
      .send({ content: 'Likes green tea', importance: 0.9 })
      .expect(200);
    expect(patched.body.memory).toEqual(
      expect.objectContaining({ id: memory.id, content: 'Likes green tea', type: 'fact', importance: 0.9 }),
    );
    expect(
      (await api().get(`/api/profiles/${profile.id}/memories/${memory.id}`).expect(200)).body.memory,
    ).toEqual(patched.body.memory);
    await api().delete(`/api/profiles/${profile.id}/memories/${memory.id}`).expect(200);
    await api().get(`/api/profiles/${profile.id}/memories/${memory.id}`).expect(404);
    const history = await historyOf(`/api/profiles/${profile.id}/memories/${memory.id}/history`);
    expect(history.map((entry) => [entry.change, entry.source, entry.oldValue, entry.newValue])).toEqual([
      ['deleted', 'api', { content: 'Likes green tea', type: 'fact', importance: 0.9 }, null],
      [
        'updated',
        'api',
        { content: 'Likes tea', type: 'fact', importance: 0.4 },
        { content: 'Likes green tea', type: 'fact', importance: 0.9 },
      ],
      ['created', 'api', null, { content: 'Likes tea', type: 'fact', importance: 0.4 }],
    ]);
  });

  it('refuses bad PATCH bodies in the envelope, changing nothing', async () => {
    const profile = await makeProfile(t, nextUser());
    const memory = await makeMemory(t, profile.id, { content: 'Plays the piano' });
    await makeMemory(t, profile.id, { content: 'Plays the violin' });
    const cases: Array<[object, number, string]> = [
      [{}, 400, 'empty_update'],
      [{ content: '' }, 400, 'invalid_content'],
      [{ content: '   ' }, 400, 'invalid_content'],
      [{ content: 7 }, 400, 'invalid_content'],
      [{ content: 'x'.repeat(10_001) }, 400, 'invalid_content'],
      [{ type: 'rumour' }, 400, 'invalid_memory_type'],
      [{ importance: 1.5 }, 400, 'invalid_importance'],
      [{ importance: null }, 400, 'invalid_importance'],
      [{ colour: 'red' }, 400, 'unknown_field'],
      [{ content: 'plays the VIOLIN' }, 409, 'duplicate_memory'],
    ];
    for (const [body, status, code] of cases) {
      const res = await api().patch(`/api/profiles/${profile.id}/memories/${memory.id}`).send(body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expectEnvelope(res.body, code);
    }
    const history = await historyOf(`/api/profiles/${profile.id}/memories/${memory.id}/history`);
    expect(history.map((entry) => entry.change)).toEqual(['created']);
  });

  it('keeps the history of a trait, also after it is deleted, and reverts it', async () => {
    const profile = await makeProfile(t, nextUser());
    await putTrait(t, profile.id, 'communication_style', 'formal');
    await putTrait(t, profile.id, 'communication_style', 'casual');
    await api().delete(`/api/profiles/${profile.id}/traits/communication_style`).expect(200);
    const path = `/api/profiles/${profile.id}/traits/communication_style/history`;
    const history = await historyOf(path);
    expect(
      history.map((entry) => [
        entry.change,
        entry.source,
        entry.oldValue?.value ?? null,
        entry.newValue?.value ?? null,
      ]),
    ).toEqual([
      ['deleted', 'api', 'casual', null],
      ['updated', 'api', 'formal', 'casual'],
      ['created', 'api', null, 'formal'],
    ]);
    const formal = history[2];
    const reverted = await api()
      .post(`/api/profiles/${profile.id}/traits/communication_style/revert`)
      .send({ historyId: formal.id })
      .expect(200);
    expect(reverted.body.trait).toEqual(
      expect.objectContaining({ key: 'communication_style', value: 'formal', source: 'manual' }),
    );
    const after = await historyOf(path);
    expect(after[0]).toEqual(
      expect.objectContaining({
        change: 'reverted',
        oldValue: null,
        newValue: { value: 'formal', confidence: 1 },
      }),
    );
    // the value of a deletion entry is the one it removed
    await api()
      .post(`/api/profiles/${profile.id}/traits/communication_style/revert`)
      .send({ historyId: history[0].id })
      .expect(200);
    expect((await api().get(`/api/profiles/${profile.id}/traits`).expect(200)).body.traits).toEqual([
      expect.objectContaining({ key: 'communication_style', value: 'casual' }),
    ]);

    for (const [body, status, code] of [
      [{}, 400, 'invalid_history_id'],
      [{ historyId: 'nope' }, 400, 'invalid_history_id'],
      [{ historyId: '00000000-0000-4000-8000-000000000000' }, 404, 'history_not_found'],
    ] as Array<[object, number, string]>) {
      const res = await api()
        .post(`/api/profiles/${profile.id}/traits/communication_style/revert`)
        .send(body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expectEnvelope(res.body, code);
    }
    expectEnvelope(
      (await api().get(`/api/profiles/${profile.id}/traits/never_set/history`).expect(404)).body,
      'trait_not_found',
    );
  });

  it("never reaches another profile's memory or trait history: 404, nothing changed, no history written", async () => {
    const owner = await makeProfile(t, nextUser());
    const intruder = await makeProfile(t, nextUser());
    const memory = await makeMemory(t, owner.id, { content: 'Secret of the owner' });
    await putTrait(t, owner.id, 'name', 'Olga');
    const through = `/api/profiles/${intruder.id}/memories/${memory.id}`;
    for (const res of [
      await api().get(through),
      await api().patch(through).send({ content: 'Hijacked' }),
      await api().delete(through),
      await api().get(`${through}/history`),
      await api().get(`/api/profiles/${intruder.id}/traits/name/history`),
    ]) {
      expect(res.status).toBe(404);
    }
    const ownerTraitHistory = await historyOf(`/api/profiles/${owner.id}/traits/name/history`);
    const revert = await api()
      .post(`/api/profiles/${intruder.id}/traits/name/revert`)
      .send({ historyId: ownerTraitHistory[0].id });
    expect(revert.status).toBe(404);
    expect(
      (await api().get(`/api/profiles/${owner.id}/memories/${memory.id}`).expect(200)).body.memory.content,
    ).toBe('Secret of the owner');
    expect(
      (await historyOf(`/api/profiles/${owner.id}/memories/${memory.id}/history`)).map((e) => e.change),
    ).toEqual(['created']);
    expect((await api().get(`/api/profiles/${intruder.id}/export`).expect(200)).body.history).toEqual([]);
  });

  it('removes the history with the profile; the delete counts stay traits, memories and messages', async () => {
    const profile = await makeProfile(t, nextUser());
    await makeMemory(t, profile.id, { content: 'Soon gone' });
    const deleted = await api().delete(`/api/profiles/${profile.id}`).expect(200);
    expect(Object.keys(deleted.body.deleted).sort()).toEqual(['memories', 'messages', 'traits']);
    const [{ count }] = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM profile_history WHERE profile_id = $1`,
      [profile.id],
    );
    expect(count).toBe(0);
  });
});
