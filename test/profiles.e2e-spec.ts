import { randomUUID } from 'node:crypto';
import {
  expectEnvelope,
  insertMessages,
  ISO_TIMESTAMP,
  makeMemory,
  makeProfile,
  putTrait,
  UUID,
} from './support/factories';
import { truncateAll, useTestApp } from './support/test-app';

describe('Profiles API', () => {
  const t = useTestApp();

  describe('POST /api/profiles', () => {
    it('creates a profile (201) with exactly the documented fields, then returns the same one (200)', async () => {
      const created = await t.api().post('/api/profiles').send({ externalId: 'create-me' }).expect(201);
      const profile = created.body.profile;
      expect(Object.keys(profile).sort()).toEqual(
        [
          'createdAt',
          'externalId',
          'id',
          'summary',
          'summaryUpdatedAt',
          'summaryVersion',
          'updatedAt',
        ].sort(),
      );
      expect(profile).toMatchObject({
        externalId: 'create-me',
        summary: '',
        summaryVersion: 0,
        summaryUpdatedAt: null,
      });
      expect(profile.id).toMatch(UUID);
      expect(profile.createdAt).toMatch(ISO_TIMESTAMP);

      const again = await t.api().post('/api/profiles').send({ externalId: 'create-me' }).expect(200);
      expect(again.body.profile.id).toBe(profile.id);
    });

    it('trims the external id', async () => {
      const res = await t.api().post('/api/profiles').send({ externalId: '  spaced  ' }).expect(201);
      expect(res.body.profile.externalId).toBe('spaced');
      await t.api().post('/api/profiles').send({ externalId: 'spaced' }).expect(200);
    });

    it('yields one profile when many requests create the same external id at once', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, () => t.api().post('/api/profiles').send({ externalId: 'racy' })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(19);
      expect(new Set(results.map((r) => r.body.profile.id)).size).toBe(1);
      const rows = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM profiles WHERE external_id = 'racy'`,
      );
      expect(rows[0].n).toBe(1);
    });

    it.each([
      ['missing', {}, 'invalid_external_id'],
      ['empty', { externalId: '' }, 'invalid_external_id'],
      ['blank', { externalId: '   ' }, 'invalid_external_id'],
      ['a number', { externalId: 42 }, 'invalid_external_id'],
      ['null', { externalId: null }, 'invalid_external_id'],
      ['an array', { externalId: ['a'] }, 'invalid_external_id'],
      ['256 characters', { externalId: 'x'.repeat(256) }, 'invalid_external_id'],
      ['a NUL character', { externalId: 'nul\u0000byte' }, 'invalid_external_id'],
      ['an unknown field', { externalId: 'ok', extra: 1 }, 'unknown_field'],
    ])('rejects an externalId that is %s', async (_label, body, code) => {
      const res = await t.api().post('/api/profiles').send(body).expect(400);
      const error = expectEnvelope(res.body, code);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(code === 'unknown_field' ? 'extra' : 'externalId');
    });
  });

  describe('GET /api/profiles', () => {
    beforeAll(async () => {
      await truncateAll(t.dataSource);
      for (const id of ['list-a', 'list-b', 'list-c', '100%_real', '100x_fake']) await makeProfile(t, id);
    });

    it('lists newest first with the total, without traits', async () => {
      const res = await t.api().get('/api/profiles').expect(200);
      expect(res.body.total).toBe(5);
      expect(res.body.profiles.map((p: { externalId: string }) => p.externalId)).toEqual([
        '100x_fake',
        '100%_real',
        'list-c',
        'list-b',
        'list-a',
      ]);
      expect(res.body.profiles[0].traits).toBeUndefined();
      expect(res.body.profiles[0].summaryVersion).toBe(0);
    });

    it('pages with limit and offset; total ignores them', async () => {
      const res = await t.api().get('/api/profiles?limit=2&offset=1').expect(200);
      expect(res.body.total).toBe(5);
      expect(res.body.profiles.map((p: { externalId: string }) => p.externalId)).toEqual([
        '100%_real',
        'list-c',
      ]);
      const beyond = await t.api().get('/api/profiles?offset=50').expect(200);
      expect(beyond.body).toEqual({ profiles: [], total: 5 });
    });

    it('clamps limit to 100', async () => {
      for (let i = 0; i < 101; i++)
        await t.dataSource.query(`INSERT INTO profiles (external_id) VALUES ($1)`, [`bulk-${i}`]);
      const res = await t.api().get('/api/profiles?limit=1000').expect(200);
      expect(res.body.profiles).toHaveLength(100);
      expect(res.body.total).toBe(106);
      await t.dataSource.query(`DELETE FROM profiles WHERE external_id LIKE 'bulk-%'`);
    });

    it('searches external ids case-insensitively, taking % and _ literally', async () => {
      const upper = await t.api().get('/api/profiles?search=LIST').expect(200);
      expect(upper.body.total).toBe(3);
      const percent = await t
        .api()
        .get(`/api/profiles?search=${encodeURIComponent('100%_')}`)
        .expect(200);
      expect(percent.body.profiles.map((p: { externalId: string }) => p.externalId)).toEqual(['100%_real']);
      const none = await t
        .api()
        .get(`/api/profiles?search=${encodeURIComponent("' OR 1=1 --")}`)
        .expect(200);
      expect(none.body).toEqual({ profiles: [], total: 0 });
    });

    it.each([
      ['limit=abc', 'invalid_limit'],
      ['limit=10abc', 'invalid_limit'],
      ['limit=-1', 'invalid_limit'],
      ['limit=1.5', 'invalid_limit'],
      ['limit=1e2', 'invalid_limit'],
      ['limit=', 'invalid_limit'],
      ['limit=1&limit=2', 'invalid_limit'],
      ['offset=x', 'invalid_offset'],
      ['offset=-5', 'invalid_offset'],
      ['unknown=1', 'unknown_field'],
    ])('rejects ?%s with %s', async (query, code) => {
      const res = await t.api().get(`/api/profiles?${query}`).expect(400);
      expectEnvelope(res.body, code);
    });
  });

  describe('GET /api/profiles/:id', () => {
    it('finds a profile by internal id and by external id, with traits and the 10 newest memories', async () => {
      const profile = await makeProfile(t, 'detail-user');
      await putTrait(t, profile.id, 'name', 'Ada');
      for (let i = 0; i < 12; i++) await makeMemory(t, profile.id, { content: `fact number ${i}` });

      const byId = await t.api().get(`/api/profiles/${profile.id}`).expect(200);
      const byExternal = await t.api().get('/api/profiles/detail-user').expect(200);
      expect(byExternal.body).toEqual(byId.body);

      const { profile: body, recentMemories } = byId.body;
      expect(body.id).toBe(profile.id);
      expect(body.summaryVersion).toBe(0);
      expect(body.traits).toHaveLength(1);
      expect(Object.keys(body.traits[0]).sort()).toEqual(
        ['confidence', 'createdAt', 'key', 'source', 'updatedAt', 'value'].sort(),
      );
      expect(body.traits[0]).toMatchObject({ key: 'name', value: 'Ada', confidence: 1, source: 'manual' });
      expect(recentMemories).toHaveLength(10);
      expect(recentMemories[0].content).toBe('fact number 11');
      expect(recentMemories[9].content).toBe('fact number 2');
      expect(byId.body.learning).toEqual({
        extractor: 'heuristic',
        rulesFallback: true,
        pendingMessages: 0,
        failedMessages: 0,
        fellBackMessages: 0,
        lastError: null,
        lastErrorAt: null,
      });
      expect(Object.keys(recentMemories[0]).sort()).toEqual([
        'content',
        'createdAt',
        'id',
        'importance',
        'type',
      ]);
    });

    it('prefers the internal id when a UUID-shaped external id names another profile', async () => {
      const target = await makeProfile(t);
      const impostor = await makeProfile(t, target.id);
      const res = await t.api().get(`/api/profiles/${target.id}`).expect(200);
      expect(res.body.profile.id).toBe(target.id);
      expect(impostor.externalId).toBe(target.id);
    });

    it('finds a profile whose external id looks like a UUID of no profile', async () => {
      const externalId = randomUUID();
      const profile = await makeProfile(t, externalId);
      const res = await t.api().get(`/api/profiles/${externalId.toUpperCase()}`).expect(404);
      expectEnvelope(res.body, 'profile_not_found');
      const ok = await t.api().get(`/api/profiles/${externalId}`).expect(200);
      expect(ok.body.profile.id).toBe(profile.id);
    });

    it.each([
      ['an unknown UUID', randomUUID()],
      ['an unknown external id', 'no-such-user'],
      ['300 characters', 'x'.repeat(300)],
      ['a NUL character', '%00'],
      ['SQL', "'; DROP TABLE profiles; --"],
    ])('answers 404 profile_not_found for %s', async (_label, id) => {
      const res = await t
        .api()
        .get(`/api/profiles/${encodeURIComponent(id)}`)
        .expect(404);
      const error = expectEnvelope(res.body, 'profile_not_found');
      expect(error.type).toBe('not_found');
    });
  });

  describe('PATCH /api/profiles/:id', () => {
    it('sets the summary and bumps summaryVersion', async () => {
      const profile = await makeProfile(t);
      const res = await t
        .api()
        .patch(`/api/profiles/${profile.id}`)
        .send({ summary: 'Likes tea 🍵' })
        .expect(200);
      expect(res.body.profile).toMatchObject({ summary: 'Likes tea 🍵', summaryVersion: 1 });
      expect(res.body.profile.summaryUpdatedAt).toMatch(ISO_TIMESTAMP);
      const [row] = await t.dataSource.query(`SELECT summary_is_manual FROM profiles WHERE id = $1`, [
        profile.id,
      ]);
      expect(row.summary_is_manual).toBe(true);

      const cleared = await t
        .api()
        .patch(`/api/profiles/${profile.externalId}`)
        .send({ summary: '' })
        .expect(200);
      expect(cleared.body.profile).toMatchObject({ summary: '', summaryVersion: 2 });
      const [after] = await t.dataSource.query(`SELECT summary_is_manual FROM profiles WHERE id = $1`, [
        profile.id,
      ]);
      expect(after.summary_is_manual).toBe(false);
    });

    it.each([
      ['missing', {}],
      ['a number', { summary: 5 }],
      ['null', { summary: null }],
      ['20,001 characters', { summary: 'x'.repeat(20_001) }],
    ])('rejects a summary that is %s', async (_label, body) => {
      const profile = await makeProfile(t);
      const res = await t.api().patch(`/api/profiles/${profile.id}`).send(body).expect(400);
      expectEnvelope(res.body, 'invalid_summary');
    });

    it('answers 404 for an unknown profile', async () => {
      const res = await t.api().patch('/api/profiles/ghost').send({ summary: 'x' }).expect(404);
      expectEnvelope(res.body, 'profile_not_found');
    });
  });

  describe('DELETE /api/profiles/:id', () => {
    it('deletes the profile and everything of it, with exact counts', async () => {
      const profile = await makeProfile(t);
      const other = await makeProfile(t);
      await putTrait(t, profile.id, 'name', 'Grace');
      await putTrait(t, profile.id, 'interests', ['chess']);
      for (let i = 0; i < 3; i++) await makeMemory(t, profile.id);
      await makeMemory(t, other.id);
      await insertMessages(t, profile.id, ['hi', 'hello', 'bye', 'ciao', 'x']);
      await insertMessages(t, other.id, ['keep me']);

      const res = await t.api().delete(`/api/profiles/${profile.externalId}`).expect(200);
      expect(res.body).toEqual({ success: true, deleted: { traits: 2, memories: 3, messages: 5 } });

      for (const table of ['traits', 'memories', 'messages']) {
        const [gone] = await t.dataSource.query(
          `SELECT count(*)::int AS n FROM ${table} WHERE profile_id = $1`,
          [profile.id],
        );
        expect(gone.n).toBe(0);
      }
      const [kept] = await t.dataSource.query(
        `SELECT (SELECT count(*) FROM memories WHERE profile_id = $1)::int AS m,
                (SELECT count(*) FROM messages WHERE profile_id = $1)::int AS g`,
        [other.id],
      );
      expect(kept).toEqual({ m: 1, g: 1 });
      await t.api().get(`/api/profiles/${profile.id}`).expect(404);
      const again = await t.api().delete(`/api/profiles/${profile.id}`).expect(404);
      expectEnvelope(again.body, 'profile_not_found');
    });

    it('counts zeros for an empty profile', async () => {
      const profile = await makeProfile(t);
      const res = await t.api().delete(`/api/profiles/${profile.id}`).expect(200);
      expect(res.body).toEqual({ success: true, deleted: { traits: 0, memories: 0, messages: 0 } });
    });
  });

  describe('GET /api/profiles/:id/export', () => {
    it('exports exactly the documented fields of everything stored', async () => {
      const profile = await makeProfile(t, 'export-user');
      await putTrait(t, profile.id, 'timezone', 'Europe/Berlin', 0.8);
      const memory = await makeMemory(t, profile.id, {
        content: 'Owns a bike',
        type: 'fact',
        importance: 0.7,
      });
      await insertMessages(t, profile.id, ['I own a bike', 'Nice!']);

      const res = await t.api().get('/api/profiles/export-user/export').expect(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'audit',
        'exportedAt',
        'history',
        'memories',
        'messages',
        'profile',
        'traits',
      ]);
      expect(res.body.profile).toEqual({
        id: profile.id,
        externalId: 'export-user',
        summary: '',
        createdAt: profile.createdAt,
        updatedAt: profile.updatedAt,
      });
      expect(res.body.traits).toEqual([
        {
          key: 'timezone',
          value: 'Europe/Berlin',
          confidence: 0.8,
          source: 'manual',
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
        },
      ]);
      expect(res.body.memories).toEqual([
        { id: memory.id, content: 'Owns a bike', type: 'fact', importance: 0.7, createdAt: memory.createdAt },
      ]);
      expect(res.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', 'I own a bike'],
        ['assistant', 'Nice!'],
      ]);
      expect(Object.keys(res.body.messages[0]).sort()).toEqual(['content', 'createdAt', 'id', 'role']);
      expect(res.body.exportedAt).toMatch(ISO_TIMESTAMP);
      // every change, oldest first, in a key of its own
      expect(
        res.body.history.map((entry: { subject: string; change: string }) => [entry.subject, entry.change]),
      ).toEqual([
        ['trait', 'created'],
        ['memory', 'created'],
      ]);
    });

    it('answers 404 for an unknown profile', async () => {
      const res = await t.api().get(`/api/profiles/${randomUUID()}/export`).expect(404);
      expectEnvelope(res.body, 'profile_not_found');
    });
  });
});
