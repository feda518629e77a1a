import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { makeProfileWith } from './support/factories';
import { analysedMessages, analysedText, extractionAnswer, llmAnswer } from './support/fake-llm';
import { startTestApp, useTestApp } from './support/test-app';
import { chatRequest, chatTurn } from './support/clients';

const LLM_ENV = {
  EXTRACTION_LLM_ATTEMPTS: '1',
  EXTRACTION_MAX_ATTEMPTS: '2',
  EXTRACTION_RULES_FALLBACK: 'false', // these tests follow the LLM's failures to the end (learning-fallback: the rules)
  EXTRACTION_SWEEP_INTERVAL_MS: '0',
  EXTRACTION_BACKOFF_MS: '0',
};

/** Background extraction with the LLM extractor: per-request schemas, failures, retries, shutdown. */
describe('background extraction (LLM extractor)', () => {
  const t = useTestApp({ upstream: 'openai', extractor: 'llm', env: LLM_ENV });
  const quietProfile = async () => (await makeProfileWith(t, { summary: 'By hand.' })).profile;

  async function chat(userId: string, content: string, extra: Record<string, unknown> = {}, headers = {}) {
    t.upstream.script(llmAnswer('I am the assistant. My name is Bob.'));
    await chatRequest(t, userId, content, extra).set(headers).expect(200);
  }

  const messagesOf = (profileId: string) =>
    t.dataSource.query(
      `SELECT role, extracted_at, extraction_attempts, extraction_error FROM messages WHERE profile_id = $1 ORDER BY seq`,
      [profileId],
    );

  it('sends only the user text, asks for the per-request keys, and stores them', async () => {
    const profile = await quietProfile();
    t.llm.script(
      extractionAnswer(
        [
          { key: 'favourite_colour', value: 'green', confidence: 0.9 },
          { key: 'pet', value: 'cat', confidence: 0.9 }, // asked for in the header only
        ],
        [{ content: 'The user paints landscapes.', type: 'fact', importance: 0.6 }],
      ),
    );
    await chat(
      profile.externalId!,
      'I paint landscapes, mostly in green. I have a cat.',
      { service: { traits: [{ key: 'favourite_colour', valueType: 'string' }] } },
      { 'X-Service-Traits': JSON.stringify([{ key: 'pet' }]) },
    );
    await t.drain();

    expect(t.llm.requests).toHaveLength(1);
    expect(analysedText(t.llm.requests[0])).toBe('I paint landscapes, mostly in green. I have a cat.');
    const keys: string[] =
      t.llm.requests[0].body.response_format.json_schema.schema.properties.traits.items.properties.key.enum;
    expect(keys).toEqual(expect.arrayContaining(['name', 'favourite_colour', 'pet']));

    const traits = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
    expect(traits.body.traits).toEqual([
      expect.objectContaining({
        key: 'favourite_colour',
        value: 'green',
        category: 'custom',
        source: 'extracted',
      }),
      expect.objectContaining({ key: 'pet', value: 'cat', source: 'extracted' }),
    ]);
    const [user] = await t.dataSource.query(
      `SELECT id FROM messages WHERE profile_id = $1 AND role = 'user'`,
      [profile.id],
    );
    const [memory] = await t.dataSource.query(
      `SELECT source_message_ids FROM memories WHERE profile_id = $1`,
      [profile.id],
    );
    expect(memory.source_message_ids).toEqual([user.id]);
  });

  it('numbers the messages of a batch, and each memory cites those the LLM names, when it names real ones', async () => {
    const profile = await quietProfile();
    const texts = ['I have two kids.', 'I moved to Porto.', 'My kids love football.'];
    for (const content of texts) {
      await t.dataSource.query(`INSERT INTO messages (profile_id, role, content) VALUES ($1, 'user', $2)`, [
        profile.id,
        content,
      ]);
    }
    t.llm.script(
      llmAnswer(
        JSON.stringify({
          traits: [],
          memories: [
            { content: 'The user lives in Porto.', type: 'fact', importance: 0.6, messages: [2] },
            { content: 'The user has two children.', type: 'fact', importance: 0.8, messages: [3, 1] },
            { content: 'The user likes sport.', type: 'preference', importance: 0.4, messages: [9] },
            { content: 'The user is a parent.', type: 'fact', importance: 0.5 },
          ],
        }),
      ),
    );
    await t.app.get(ExtractionWorker).sweep();
    expect(t.llm.requests).toHaveLength(1);
    expect(analysedMessages(t.llm.requests[0])).toEqual(texts);
    const ids: string[] = (
      await t.dataSource.query(`SELECT id FROM messages WHERE profile_id = $1 ORDER BY seq`, [profile.id])
    ).map((row: { id: string }) => row.id);
    const memories = await t.dataSource.query(
      `SELECT content, source_message_ids FROM memories WHERE profile_id = $1 ORDER BY content`,
      [profile.id],
    );
    expect(memories).toEqual([
      { content: 'The user has two children.', source_message_ids: [ids[0], ids[2]] },
      { content: 'The user is a parent.', source_message_ids: ids }, // named none: every message it read
      { content: 'The user likes sport.', source_message_ids: ids }, // named none of them
      { content: 'The user lives in Porto.', source_message_ids: [ids[1]] },
    ]);
  });

  it('records a failure, retries it on the next sweep, and gives up after EXTRACTION_MAX_ATTEMPTS', async () => {
    const profile = await quietProfile();
    t.llm.script({ kind: 'error', status: 500 }, { kind: 'error', status: 502 });
    await chat(profile.externalId!, 'My name is Anna.');
    await t.drain();
    const afterFirst = await messagesOf(profile.id);
    // the reply is stored as extracted (nothing about the user is learnt from it): only the user's message tries
    expect(afterFirst.map((m: { extraction_attempts: number }) => m.extraction_attempts)).toEqual([1, 0]);
    expect(afterFirst[0].extracted_at).toBeNull();
    expect(afterFirst[0].extraction_error).toContain('HTTP 500');

    const worker = t.app.get(ExtractionWorker);
    await worker.sweep();
    const afterSecond = await messagesOf(profile.id);
    expect(afterSecond[0]).toMatchObject({
      extraction_attempts: 2,
      extraction_error: expect.stringContaining('HTTP 502'),
    });
    expect(afterSecond[0].extracted_at).not.toBeNull(); // given up: done, with the error kept

    await worker.sweep();
    expect(t.llm.requests).toHaveLength(2);
    const traits = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
    expect(traits.body.traits).toEqual([]);
  });

  it('succeeds on a later sweep after a transient failure, and clears the error', async () => {
    const profile = await quietProfile();
    t.llm.script(
      { kind: 'error', status: 503 },
      extractionAnswer([{ key: 'name', value: 'Anna', confidence: 0.9 }]),
    );
    await chat(profile.externalId!, 'My name is Anna.');
    await t.drain();
    expect((await messagesOf(profile.id))[0]).toMatchObject({ extraction_attempts: 1, extracted_at: null });

    await t.app.get(ExtractionWorker).sweep();
    const [user] = await messagesOf(profile.id);
    expect(user).toMatchObject({ extraction_attempts: 1, extraction_error: null });
    expect(user.extracted_at).not.toBeNull();
    const traits = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
    expect(traits.body.traits).toEqual([expect.objectContaining({ key: 'name', value: 'Anna' })]);
    expect(t.llm.requests).toHaveLength(2);
  });

  it('stops an extraction in flight on shutdown, promptly, without counting a failure', async () => {
    const own = await startTestApp({ ...t.env, LLM_TIMEOUT_MS: '60000' });
    const profile = (await own.api().post('/api/profiles').send({ externalId: 'shutdown-user' }).expect(201))
      .body.profile;
    t.llm.script({ kind: 'hang' });
    t.upstream.script(llmAnswer('ok'));
    await own
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', 'shutdown-user')
      .send({ model: 'fake-model', messages: [{ role: 'user', content: 'My name is Anna.' }] })
      .expect(200);
    await t.llm.waitForRequests(1);
    const pending = await own.dataSource.query(
      `SELECT extraction_attempts FROM messages WHERE profile_id = $1 AND extracted_at IS NULL`,
      [profile.id],
    );
    expect(pending).toEqual([{ extraction_attempts: 0 }]);
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    await t.llm.waitForClientClose(0);
  });

  describe('after a failure', () => {
    const patient = useTestApp({
      upstream: 'openai',
      extractor: 'llm',
      env: { ...LLM_ENV, EXTRACTION_BACKOFF_MS: '60000' },
    });

    const patientChat = (userId: string, content: string) => chatTurn(patient, userId, content);

    it('waits before trying a failed batch again, and new turns are extracted without it', async () => {
      const profile = (
        await patient.api().post('/api/profiles').send({ externalId: 'patient-1' }).expect(201)
      ).body.profile;
      await patient.api().patch(`/api/profiles/${profile.id}`).send({ summary: 'By hand.' }).expect(200);
      patient.llm.script({ kind: 'error', status: 500 });
      await patientChat('patient-1', 'My name is Anna.');
      expect(patient.llm.requests).toHaveLength(1);

      await patient.app.get(ExtractionWorker).sweep();
      expect(patient.llm.requests).toHaveLength(1); // still waiting: no new try on every sweep

      patient.llm.script(extractionAnswer([{ key: 'favourite_colour', value: 'blue', confidence: 0.9 }]));
      await patientChat('patient-1', 'I like the colour blue.');
      expect(patient.llm.requests).toHaveLength(2);
      expect(analysedText(patient.llm.requests[1])).toBe('I like the colour blue.'); // the failed batch is not joined

      const status = await patient.api().get(`/api/profiles/patient-1/extraction`).expect(200);
      expect(status.body).toEqual({ extraction: { pending: 1, backingOff: 1, failed: 0 } });
      const rows = await patient.dataSource.query(
        `SELECT content, extraction_attempts, extracted_at IS NOT NULL AS done FROM messages
         WHERE profile_id = $1 AND role = 'user' ORDER BY seq`,
        [profile.id],
      );
      expect(rows).toEqual([
        { content: 'My name is Anna.', extraction_attempts: 1, done: false },
        { content: 'I like the colour blue.', extraction_attempts: 0, done: true },
      ]);
    });

    it('puts given-up messages back in the queue on request, and learns from them', async () => {
      const profile = (await t.api().post('/api/profiles').send({ externalId: 'given-up' }).expect(201)).body
        .profile;
      await t.api().patch(`/api/profiles/${profile.id}`).send({ summary: 'By hand.' }).expect(200);
      t.llm.script({ kind: 'error', status: 500 }, { kind: 'error', status: 500 });
      await chat('given-up', 'My name is Anna.');
      await t.drain();
      await t.app.get(ExtractionWorker).sweep(); // second failure: given up (EXTRACTION_MAX_ATTEMPTS 2)
      expect((await t.api().get('/api/profiles/given-up/extraction').expect(200)).body.extraction).toEqual({
        pending: 0,
        backingOff: 0,
        failed: 1,
      });

      t.llm.script(extractionAnswer([{ key: 'name', value: 'Anna', confidence: 0.9 }]));
      const retried = await t.api().post('/api/profiles/given-up/extraction/retry').expect(200);
      expect(retried.body).toEqual({ requeued: 1 });
      await t.drain();
      const traits = await t.api().get(`/api/profiles/${profile.id}/traits`).expect(200);
      expect(traits.body.traits).toEqual([expect.objectContaining({ key: 'name', value: 'Anna' })]);
      expect(
        (await t.api().get('/api/profiles/given-up/extraction').expect(200)).body.extraction.failed,
      ).toBe(0);
      await t.api().post('/api/profiles/nobody-here/extraction/retry').expect(404);
    });
  });
});
