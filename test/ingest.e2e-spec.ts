import { randomUUID } from 'node:crypto';
import { JobLeases } from '../src/database/job-leases';
import { expectEnvelope, ISO_TIMESTAMP, makeMemory, makeProfile, putTrait, UUID } from './support/factories';
import { useTestApp } from './support/test-app';

/** Ingest with the heuristic extractor: the whole contract of SPEC §4.9 on the real database. */
describe('POST /api/profiles/:id/ingest (heuristic extractor)', () => {
  const t = useTestApp({ env: { EXTRACTOR: 'heuristic', SUMMARY_INTERVAL_MINUTES: '60' } });

  const ingest = (profileId: string, body: Record<string, unknown>) =>
    t
      .api()
      .post(`/api/profiles/${encodeURIComponent(profileId)}/ingest`)
      .send(body);

  it('extracts, stores and answers with exactly what it created, echoing source and metadata', async () => {
    const profile = await makeProfile(t);
    const res = await ingest(profile.externalId!, {
      data: "My name is Anna. I live in Berlin. I love hiking. I have two kids. What's the weather like?",
      source: 'crm-import',
      metadata: { batch: 7, tags: ['a', 'b'], nested: { ok: true } },
    }).expect(200);

    expect(Object.keys(res.body).sort()).toEqual(['extracted', 'metadata', 'profile', 'source']);
    expect(res.body.source).toBe('crm-import');
    expect(res.body.metadata).toEqual({ batch: 7, tags: ['a', 'b'], nested: { ok: true } });
    expect(res.body.extracted.traits).toEqual([
      { key: 'name', value: 'Anna', confidence: 0.9, action: 'create' },
      { key: 'location', value: 'Berlin', confidence: 0.9, action: 'create' },
      { key: 'interests', value: ['hiking'], confidence: expect.any(Number), action: 'create' },
    ]);
    expect(res.body.extracted.memories.map((m: { content: string }) => m.content).sort()).toEqual([
      'User has two kids.',
      'User lives in Berlin.',
      'User loves hiking.',
    ]);
    for (const memory of res.body.extracted.memories) {
      expect(memory).toEqual({
        id: expect.stringMatching(UUID),
        content: expect.any(String),
        type: expect.stringMatching(/^(fact|preference|event|context)$/),
        importance: expect.any(Number),
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
      });
    }
    expect(res.body.extracted.stats).toEqual({ traitsCreated: 3, traitsUpdated: 0, memoriesCreated: 3 });
    expect(res.body.profile).toEqual({
      id: profile.id,
      externalId: profile.externalId,
      summary: expect.stringContaining('Name: Anna.'),
      createdAt: profile.createdAt,
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
    });

    const traits = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
    expect(
      traits.body.traits.map((trait: { key: string; source: string }) => [trait.key, trait.source]),
    ).toEqual([
      ['interests', 'extracted'],
      ['location', 'extracted'],
      ['name', 'extracted'],
    ]);
    const memories = await t.api().get(`/api/profiles/${profile.id}/memories`).expect(200);
    expect(memories.body.memories).toHaveLength(3);
    const [stored] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM traits WHERE profile_id = $1 AND source_message_ids = '{}'`,
      [profile.id],
    );
    expect(stored.n).toBe(3); // ingested text is not a stored message
  });

  it('answers source and metadata null when absent, and accepts the internal id', async () => {
    const profile = await makeProfile(t);
    const res = await ingest(profile.id, { data: 'Nothing about me here.' }).expect(200);
    expect(res.body).toMatchObject({
      source: null,
      metadata: null,
      extracted: {
        traits: [],
        memories: [],
        stats: { traitsCreated: 0, traitsUpdated: 0, memoriesCreated: 0 },
      },
    });
  });

  it('does not store a repeat: the same text again creates nothing and changes nothing', async () => {
    const profile = await makeProfile(t);
    const data = 'My name is Omar. I have two kids. I prefer tea over coffee.';
    const first = await ingest(profile.id, { data }).expect(200);
    expect(first.body.extracted.stats).toEqual({ traitsCreated: 1, traitsUpdated: 0, memoriesCreated: 2 });
    const again = await ingest(profile.id, { data: data.toUpperCase().replace('OMAR', 'Omar') }).expect(200);
    expect(again.body.extracted).toEqual({
      traits: [],
      memories: [],
      stats: { traitsCreated: 0, traitsUpdated: 0, memoriesCreated: 0 },
    });
    const memories = await t.api().get(`/api/profiles/${profile.id}/memories`).expect(200);
    expect(memories.body.memories).toHaveLength(2);
  });

  it('never changes a manual trait; replaces an extracted one; merges list traits', async () => {
    const profile = await makeProfile(t);
    await putTrait(t, profile.id, 'name', 'Grace', 0.5);
    const first = await ingest(profile.id, {
      data: 'My name is Anna. I live in Berlin. I love hiking.',
    }).expect(200);
    expect(first.body.extracted.traits.map((trait: { key: string }) => trait.key)).toEqual([
      'location',
      'interests',
    ]);

    const second = await ingest(profile.id, { data: 'My name is Bea. I live in Rome. I love jazz.' }).expect(
      200,
    );
    expect(second.body.extracted.traits).toEqual([
      { key: 'location', value: 'Rome', confidence: 0.9, action: 'update' },
      { key: 'interests', value: ['hiking', 'jazz'], confidence: expect.any(Number), action: 'update' },
    ]);
    expect(second.body.extracted.stats).toMatchObject({ traitsCreated: 0, traitsUpdated: 2 });

    const traits = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
    const byKey = Object.fromEntries(
      traits.body.traits.map((trait: { key: string }) => [trait.key, trait] as const),
    );
    expect(byKey.name).toMatchObject({ value: 'Grace', confidence: 0.5, source: 'manual' });
    expect(byKey.location).toMatchObject({ value: 'Rome', source: 'extracted' });
    expect(byKey.interests).toMatchObject({ value: ['hiking', 'jazz'], source: 'extracted' });
  });

  it('raises the importance of a memory it meets again instead of adding one', async () => {
    const profile = await makeProfile(t);
    const manual = await makeMemory(t, profile.id, { content: 'User has two kids', importance: 0.1 });
    const res = await ingest(profile.id, { data: 'I have two kids.' }).expect(200);
    expect(res.body.extracted.memories).toEqual([]);
    const memories = await t.api().get(`/api/profiles/${profile.id}/memories`).expect(200);
    expect(memories.body.memories).toEqual([expect.objectContaining({ id: manual.id, importance: 0.8 })]);
  });

  it('honours extractTraits and extractMemories', async () => {
    const profile = await makeProfile(t);
    const data = 'My name is Kim. I have a cat.';
    const memoriesOnly = await ingest(profile.id, { data, extractTraits: false }).expect(200);
    expect(memoriesOnly.body.extracted.stats).toEqual({
      traitsCreated: 0,
      traitsUpdated: 0,
      memoriesCreated: 1,
    });
    const traitsOnly = await ingest(profile.id, { data, extractMemories: false }).expect(200);
    expect(traitsOnly.body.extracted.stats).toEqual({
      traitsCreated: 1,
      traitsUpdated: 0,
      memoriesCreated: 0,
    });
    const none = await ingest(profile.id, {
      data: 'I live in Oslo.',
      extractTraits: false,
      extractMemories: false,
    }).expect(200);
    expect(none.body.extracted.stats).toEqual({ traitsCreated: 0, traitsUpdated: 0, memoriesCreated: 0 });
  });

  it('accepts exactly 102400 UTF-8 bytes and handles a long document', async () => {
    const profile = await makeProfile(t);
    const sentence = 'I have visited Köln and I love hiking. ';
    let data = sentence.repeat(Math.floor(102_400 / Buffer.byteLength(sentence)));
    data += 'x'.repeat(102_400 - Buffer.byteLength(data));
    expect(Buffer.byteLength(data)).toBe(102_400);
    const res = await ingest(profile.id, { data }).expect(200);
    expect(res.body.extracted.traits).toEqual([
      { key: 'interests', value: ['hiking'], confidence: expect.any(Number), action: 'create' },
    ]);
  });

  describe('errors', () => {
    let profileId: string;
    beforeAll(async () => {
      profileId = (await makeProfile(t)).id;
    });

    it.each([
      ['data missing', {}, 'invalid_data'],
      ['data null', { data: null }, 'invalid_data'],
      ['data a number', { data: 42 }, 'invalid_data'],
      ['data an array', { data: ['I live in Oslo.'] }, 'invalid_data'],
      ['data empty', { data: '' }, 'invalid_data'],
      ['data blank', { data: ' \n\t ' }, 'invalid_data'],
      ['data with NUL', { data: 'a\u0000b' }, 'invalid_data'],
      ['data of 102401 bytes', { data: 'x'.repeat(102_401) }, 'data_too_large'],
      ['data of 51201 two-byte characters', { data: 'é'.repeat(51_201) }, 'data_too_large'],
      ['source not a string', { data: 'x', source: 5 }, 'invalid_source'],
      ['source null', { data: 'x', source: null }, 'invalid_source'],
      ['metadata an array', { data: 'x', metadata: [1] }, 'invalid_metadata'],
      ['metadata a string', { data: 'x', metadata: 'batch 7' }, 'invalid_metadata'],
      ['metadata too large', { data: 'x', metadata: { blob: 'x'.repeat(70_000) } }, 'invalid_metadata'],
      ['extractTraits not a boolean', { data: 'x', extractTraits: 'yes' }, 'invalid_extract_traits'],
      ['extractMemories not a boolean', { data: 'x', extractMemories: 1 }, 'invalid_extract_memories'],
      ['an unknown field', { data: 'x', text: 'y' }, 'unknown_field'],
    ])('400 for %s', async (_case, body, code) => {
      const res = await ingest(profileId, body).expect(400);
      const error = expectEnvelope(res.body, code);
      expect(error.type).toBe('invalid_request_error');
    });

    it('404 profile_not_found for an unknown external id or UUID, before looking at the text', async () => {
      for (const id of ['nobody-here', randomUUID()]) {
        const res = await ingest(id, { data: 'My name is Anna.' }).expect(404);
        expect(expectEnvelope(res.body, 'profile_not_found').type).toBe('not_found');
      }
    });
  });

  describe('summary', () => {
    it('is written after the first change, then not again within SUMMARY_INTERVAL_MINUTES', async () => {
      const profile = await makeProfile(t);
      const first = await ingest(profile.id, { data: 'My name is Lea. I have two kids.' }).expect(200);
      expect(first.body.profile.summary).toBe('Name: Lea. Noted: User has two kids.');
      const afterFirst = await t.api().get(`/api/profiles/${profile.id}`).expect(200);
      expect(afterFirst.body.profile).toMatchObject({
        summaryVersion: 1,
        summaryUpdatedAt: expect.any(String),
      });

      const leases = jest.spyOn(t.app.get(JobLeases), 'runExclusive');
      try {
        await ingest(profile.id, { data: 'I live in Oslo.' }).expect(200);
        expect(leases).not.toHaveBeenCalled(); // not due: no lease taken for it
      } finally {
        leases.mockRestore();
      }
      const within = await t.api().get(`/api/profiles/${profile.id}`).expect(200);
      expect(within.body.profile.summaryVersion).toBe(1);

      await t.dataSource.query(
        `UPDATE profiles SET summary_updated_at = now() - interval '61 minutes' WHERE id = $1`,
        [profile.id],
      );
      const later = await ingest(profile.id, { data: 'I love chess.' }).expect(200);
      expect(later.body.profile.summary).toMatch(
        /^Name: Lea\. Location: Oslo\. Interests: chess\. Noted: User has two kids\. /,
      );
      expect(later.body.profile.summary).toContain('User loves chess.');
      const after = await t.api().get(`/api/profiles/${profile.id}`).expect(200);
      expect(after.body.profile.summaryVersion).toBe(2);
    });

    it('keeps a summary written by hand until it is cleared', async () => {
      const profile = await makeProfile(t);
      await t.api().patch(`/api/profiles/${profile.id}`).send({ summary: 'Written by hand.' }).expect(200);
      const kept = await ingest(profile.id, { data: 'My name is Ida.' }).expect(200);
      expect(kept.body.profile.summary).toBe('Written by hand.');

      await t.api().patch(`/api/profiles/${profile.id}`).send({ summary: '' }).expect(200);
      await t.dataSource.query(
        `UPDATE profiles SET summary_updated_at = now() - interval '61 minutes' WHERE id = $1`,
        [profile.id],
      );
      const regenerated = await ingest(profile.id, { data: 'I have a dog.' }).expect(200);
      expect(regenerated.body.profile.summary).toBe('Name: Ida. Noted: User has a dog.');
      const after = await t.api().get(`/api/profiles/${profile.id}`).expect(200);
      expect(after.body.profile.summaryVersion).toBe(3);
    });
  });
});
