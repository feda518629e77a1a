import { randomUUID } from 'node:crypto';
import { ExtractionQueue } from '../src/extraction/extraction-queue';
import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { ExtractionService } from '../src/extraction/extraction.service';
import { makeProfile, putTrait } from './support/factories';
import { llmAnswer } from './support/fake-llm';
import { useTestApp } from './support/test-app';

interface StoredMessage {
  id: string;
  role: string;
  extracted_at: Date | null;
  extraction_attempts: number;
}

/** Background extraction after real chat turns through the proxy, with the heuristic extractor. */
describe('background extraction (heuristic extractor)', () => {
  const t = useTestApp({ upstream: 'openai', env: { EXTRACTION_SWEEP_INTERVAL_MS: '0' } });

  async function chat(userId: string, messages: Array<{ role: string; content: string }>, extra = {}) {
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', userId)
      .send({ model: 'fake-model', messages, ...extra })
      .expect(200);
  }

  const messagesOf = (profileId: string): Promise<StoredMessage[]> =>
    t.dataSource.query(
      `SELECT id, role, extracted_at, extraction_attempts FROM messages WHERE profile_id = $1 ORDER BY seq`,
      [profileId],
    );

  const traitsOf = (
    profileId: string,
  ): Promise<Array<{ key: string; value: unknown; source: string; source_message_ids: string[] }>> =>
    t.dataSource.query(
      `SELECT key, value, source, source_message_ids FROM traits WHERE profile_id = $1 ORDER BY key`,
      [profileId],
    );

  const memoriesOf = (profileId: string): Promise<Array<{ content: string; source_message_ids: string[] }>> =>
    t.dataSource.query(
      `SELECT content, source_message_ids FROM memories WHERE profile_id = $1 ORDER BY content`,
      [profileId],
    );

  it('learns from the user messages of a turn, and only from them, keeping their ids', async () => {
    const userId = `chat-${randomUUID()}`;
    t.upstream.script(llmAnswer('Nice to meet you. My name is Bob and I have three cats.'));
    await chat(userId, [{ role: 'user', content: 'My name is Anna. I have two kids. What should I cook?' }]);
    await t.drain();

    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    const [user, assistant] = await messagesOf(profile.id);
    expect(user.role).toBe('user');
    expect(assistant.role).toBe('assistant');
    expect(user.extracted_at).not.toBeNull();
    expect(assistant.extracted_at).not.toBeNull();
    expect(await traitsOf(profile.id)).toEqual([
      { key: 'name', value: 'Anna', source: 'extracted', source_message_ids: [user.id] },
    ]);
    expect(await memoriesOf(profile.id)).toEqual([
      { content: 'User has two kids.', source_message_ids: [user.id] },
    ]);
  });

  it('has each memory of a batch cite the message it came from, not every message of the batch', async () => {
    const profile = await makeProfile(t);
    for (const content of ['I have two kids.', 'I am allergic to peanuts.', 'I have two kids!']) {
      await t.dataSource.query(`INSERT INTO messages (profile_id, role, content) VALUES ($1, 'user', $2)`, [
        profile.id,
        content,
      ]);
    }
    await t.app.get(ExtractionWorker).sweep();
    const [kids, peanuts, kidsAgain] = await messagesOf(profile.id);
    expect([kids, peanuts, kidsAgain].every((message) => message.extracted_at !== null)).toBe(true);
    expect(await memoriesOf(profile.id)).toEqual([
      { content: 'User has two kids.', source_message_ids: [kids.id, kidsAgain.id] },
      { content: 'User is allergic to peanuts.', source_message_ids: [peanuts.id] },
    ]);
  });

  it('extracts a turn in one transaction, with no lease: a batch that took every ready message is the last', async () => {
    const userId = `chat-${randomUUID()}`;
    const queue = t.app.get(ExtractionQueue);
    const inPlace = jest.spyOn(queue, 'extractInPlace');
    const claims = jest.spyOn(queue, 'claimNextBatch');
    try {
      await chat(userId, [{ role: 'user', content: 'I live in Porto.' }]);
      await t.drain();
      expect(claims).not.toHaveBeenCalled();
      expect(inPlace).toHaveBeenCalledTimes(1);
      expect(await inPlace.mock.results[0].value).toEqual(
        expect.objectContaining({ batch: expect.objectContaining({ token: null, more: false }) }),
      );
    } finally {
      inPlace.mockRestore();
      claims.mockRestore();
    }
    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    expect(await traitsOf(profile.id)).toEqual([
      expect.objectContaining({ key: 'location', value: 'Porto' }),
    ]);
  });

  it('counts a failed attempt on a batch read in place, and rolls back what it applied', async () => {
    const userId = `chat-${randomUUID()}`;
    const service = t.app.get(ExtractionService);
    const apply = jest.spyOn(service, 'apply').mockImplementationOnce(async (manager, profileId) => {
      await manager.query(
        `INSERT INTO memories (profile_id, content, content_hash, type, importance) VALUES ($1, 'x', 'x', 'fact', 0.5)`,
        [profileId],
      );
      throw new Error('the apply broke');
    });
    try {
      await chat(userId, [{ role: 'user', content: 'I live in Faro.' }]);
      await t.drain();
    } finally {
      apply.mockRestore();
    }
    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    const [message] = await t.dataSource.query(
      `SELECT extracted_at, extraction_attempts, extraction_error, claim_token FROM messages
       WHERE profile_id = $1 AND role = 'user'`,
      [profile.id],
    );
    expect(message).toEqual({
      extracted_at: null,
      extraction_attempts: 1,
      extraction_error: 'the apply broke',
      claim_token: null,
    });
    expect(await memoriesOf(profile.id)).toEqual([]);
    expect(await traitsOf(profile.id)).toEqual([]);
    await t.api().delete(`/api/profiles/${profile.id}`).expect(200); // its pending message waits out a backoff
  });

  it('takes over a batch whose lease a dead process let run out, and clears the claim', async () => {
    const profile = await makeProfile(t);
    await t.dataSource.query(
      `INSERT INTO messages (profile_id, role, content) VALUES ($1, 'user', 'I live in Braga.')`,
      [profile.id],
    );
    const dead = await t.app.get(ExtractionQueue).claimNextBatch(profile.id, 50);
    expect(dead).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.app.get(ExtractionWorker).sweep();
    expect(await traitsOf(profile.id)).toEqual([
      expect.objectContaining({ key: 'location', value: 'Braga' }),
    ]);
    const [message] = await t.dataSource.query(
      `SELECT extracted_at IS NOT NULL AS done, claim_token, claimed_until FROM messages WHERE profile_id = $1`,
      [profile.id],
    );
    expect(message).toEqual({ done: true, claim_token: null, claimed_until: null });
  });

  it('learns from a streamed turn too', async () => {
    const userId = `chat-${randomUUID()}`;
    await chat(userId, [{ role: 'user', content: 'I live in Lisbon.' }], { stream: true });
    await t.drain();
    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    expect(await traitsOf(profile.id)).toEqual([
      expect.objectContaining({ key: 'location', value: 'Lisbon' }),
    ]);
  });

  it('extracts each new turn once; history the client resends is not extracted again', async () => {
    const userId = `chat-${randomUUID()}`;
    t.upstream.script(llmAnswer('Noted.'), llmAnswer('Noted again.'));
    await chat(userId, [{ role: 'user', content: 'I love hiking.' }]);
    await t.drain();
    await chat(userId, [
      { role: 'user', content: 'I love hiking.' },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: 'I love jazz too.' },
    ]);
    await t.drain();
    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    expect((await messagesOf(profile.id)).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    const traits = await traitsOf(profile.id);
    expect(traits).toEqual([expect.objectContaining({ key: 'interests', value: ['hiking', 'jazz'] })]);
    expect(traits[0].source_message_ids).toHaveLength(2);
  });

  it('keeps manual traits and merges duplicates', async () => {
    const profile = await makeProfile(t);
    await putTrait(t, profile.id, 'name', 'Grace');
    t.upstream.script(llmAnswer('ok'), llmAnswer('ok'));
    await chat(profile.externalId!, [{ role: 'user', content: 'My name is Anna. I have two kids.' }]);
    await chat(profile.externalId!, [{ role: 'user', content: 'I have two kids!' }]);
    await t.drain();
    expect(await traitsOf(profile.id)).toEqual([
      { key: 'name', value: 'Grace', source: 'manual', source_message_ids: [] },
    ]);
    const memories = await memoriesOf(profile.id);
    expect(memories).toHaveLength(1);
    expect(memories[0].source_message_ids).toHaveLength(2);
  });

  it('leaves a turn alone with service.skipExtraction, and follows the per-request schemas', async () => {
    const userId = `chat-${randomUUID()}`;
    await chat(userId, [{ role: 'user', content: 'My name is Anna.' }], {
      service: { skipExtraction: true },
    });
    await t.drain();
    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    expect(await traitsOf(profile.id)).toEqual([]);

    await chat(userId, [{ role: 'user', content: 'My name is Anna. I love hiking.' }], {
      service: { traits: [{ key: 'name', extraction: { enabled: false } }] },
    });
    await t.drain();
    expect((await traitsOf(profile.id)).map((trait) => trait.key)).toEqual(['interests']);
    expect((await messagesOf(profile.id)).every((m) => m.extracted_at !== null)).toBe(true);
  });

  it('stores what there is nothing to learn from as already extracted: only the rest waits in the queue', async () => {
    const userId = `chat-${randomUUID()}`;
    await chat(userId, [{ role: 'user', content: 'What should I cook tonight?' }]);
    await chat(userId, [{ role: 'user', content: 'I live in Lisbon.' }]);
    await t.drain();
    const profile = (await t.api().get(`/api/profiles/${userId}`).expect(200)).body.profile;
    // a message stored as extracted has it set by the statement that stored it; the worker sets it later
    const rows: Array<{ id: string; role: string; stored_extracted: boolean }> = await t.dataSource.query(
      `SELECT id, role, extracted_at = created_at AS stored_extracted FROM messages WHERE profile_id = $1 ORDER BY seq`,
      [profile.id],
    );
    expect(rows.map(({ role, stored_extracted }) => [role, stored_extracted])).toEqual([
      ['user', true],
      ['assistant', true],
      ['user', false],
      ['assistant', true],
    ]);
    expect(await traitsOf(profile.id)).toEqual([
      { key: 'location', value: 'Lisbon', source: 'extracted', source_message_ids: [rows[2].id] },
    ]);
  });

  it('finishes messages left pending (as after a crash) with a sweep', async () => {
    const profiles = await Promise.all([makeProfile(t), makeProfile(t), makeProfile(t)]);
    for (const [index, profile] of profiles.entries()) {
      await t.dataSource.query(
        `INSERT INTO messages (profile_id, role, content) VALUES ($1, 'user', $2), ($1, 'assistant', 'ok')`,
        [profile.id, `I live in City${index}.`],
      );
    }
    await t.app.get(ExtractionWorker).sweep();
    for (const [index, profile] of profiles.entries()) {
      expect(await traitsOf(profile.id)).toEqual([
        expect.objectContaining({ key: 'location', value: `City${index}` }),
      ]);
      expect(
        (await messagesOf(profile.id)).every((m) => m.extracted_at !== null && m.extraction_attempts === 0),
      ).toBe(true);
    }
    const [pending] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM messages WHERE extracted_at IS NULL`,
    );
    expect(pending.n).toBe(0);
  });
});
