import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { ISO_TIMESTAMP, makeProfile } from './support/factories';
import { llmAnswer } from './support/fake-llm';
import { FakeOpenAI, LooseJson, startFakeOpenAI } from './support/fake-openai-upstream';
import { parsePrometheusText, valueOf } from './support/prometheus-text';
import { startTestApp, TestApp } from './support/test-app';

/** How small local models often answer an extraction request: prose, no JSON. */
const PROSE = llmAnswer('Sure! The user seems to be called Anna and she lives in Lisbon. Anything else?');

const env = (llm: FakeOpenAI, upstream: FakeOpenAI, extra: Record<string, string> = {}) => ({
  EXTRACTOR: 'llm',
  LLM_BASE_URL: llm.url,
  LLM_API_KEY: 'sk-llm',
  UPSTREAM_BASE_URL: upstream.url,
  UPSTREAM_API_KEY: 'sk-upstream',
  EXTRACTION_LLM_ATTEMPTS: '2',
  EXTRACTION_RETRY_BASE_MS: '0',
  EXTRACTION_MAX_ATTEMPTS: '2',
  EXTRACTION_SWEEP_INTERVAL_MS: '0',
  EXTRACTION_BACKOFF_MS: '0',
  ...extra,
});

/** Learning with an LLM that answers in prose: the rules take over, and the profile and /metrics say so. */
describe('learning when the LLM fails', () => {
  let upstream: FakeOpenAI;
  let llm: FakeOpenAI;

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    llm = await startFakeOpenAI();
  });

  afterAll(async () => {
    await llm.close();
    await upstream.close();
  });

  /** A profile with a summary written by hand (no summary call), after one chat turn. */
  async function profileAfterTurn(t: TestApp, content: string) {
    const profile = await makeProfile(t);
    await t.api().patch(`/api/profiles/${profile.id}`).send({ summary: 'By hand.' }).expect(200);
    upstream.script(llmAnswer('Nice to meet you, Anna.'));
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', profile.externalId!)
      .send({ model: 'fake-model', messages: [{ role: 'user', content }] })
      .expect(200);
    await t.drain();
    return profile;
  }

  async function learningOf(t: TestApp, profileId: string) {
    const response = await t.api().get(`/api/profiles/${profileId}`).expect(200);
    return response.body as {
      profile: { traits: Array<{ key: string; value: unknown }> };
      learning: LooseJson;
    };
  }

  describe('with the rules as fallback (the default)', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp(env(llm, upstream));
    });

    beforeEach(() => llm.reset());
    afterAll(() => t.close());

    it('learns from the turn with the rules after the last try, and shows what happened', async () => {
      llm.script(PROSE, PROSE);
      const profile = await profileAfterTurn(t, 'My name is Anna. I live in Lisbon.');

      // the first background attempt failed: the turn waits for the next, and the profile says why
      const waiting = await learningOf(t, profile.id);
      expect(waiting.profile.traits).toEqual([]);
      expect(waiting.learning).toEqual({
        extractor: 'llm',
        rulesFallback: true,
        pendingMessages: 1,
        failedMessages: 0,
        fellBackMessages: 0,
        lastError: expect.stringMatching(/^the LLM call failed 2 time\(s\); last: unusable answer/),
        lastErrorAt: expect.stringMatching(ISO_TIMESTAMP),
      });

      // the last attempt fails too: the rules learn from the turn
      llm.script(PROSE, PROSE);
      await t.app.get(ExtractionWorker).sweep();
      expect(llm.requests).toHaveLength(4);
      const learnt = await learningOf(t, profile.id);
      expect(learnt.profile.traits).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ key: 'name', value: 'Anna', source: 'extracted' }),
        ]),
      );
      expect(learnt.learning).toEqual({
        extractor: 'llm',
        rulesFallback: true,
        pendingMessages: 0,
        failedMessages: 0,
        fellBackMessages: 1,
        lastError: expect.stringMatching(/unusable answer/),
        lastErrorAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      // nothing was given up, so there is nothing to retry
      const retry = await t.api().post(`/api/profiles/${profile.id}/extraction/retry`).expect(200);
      expect(retry.body).toEqual({ requeued: 0 });

      const metrics = parsePrometheusText((await t.api().get('/metrics').expect(200)).text);
      expect(valueOf(metrics, 'pms_extraction_failures_total', { cause: 'unusable_answer' })).toBe(2);
      expect(valueOf(metrics, 'pms_extraction_fallbacks_total', { cause: 'unusable_answer' })).toBe(1);
      expect(valueOf(metrics, 'pms_extraction_batches_total', { outcome: 'fallback' })).toBe(1);
      expect(valueOf(metrics, 'pms_extraction_batches_total', { outcome: 'failure' })).toBe(1);
    });

    it('falls back at once when the provider rejects every form of the request', async () => {
      const rejected = { kind: 'error', status: 400, body: { error: { message: 'bad request' } } } as const;
      llm.script(rejected, rejected, rejected);
      const profile = await profileAfterTurn(t, 'My name is Bruno.');

      const learnt = await learningOf(t, profile.id);
      expect(learnt.profile.traits).toEqual([expect.objectContaining({ key: 'name', value: 'Bruno' })]);
      expect(learnt.learning).toMatchObject({
        pendingMessages: 0,
        fellBackMessages: 1,
        lastError: expect.stringMatching(/^the LLM rejected the request/),
      });
      const metrics = parsePrometheusText((await t.api().get('/metrics').expect(200)).text);
      expect(valueOf(metrics, 'pms_extraction_fallbacks_total', { cause: 'rejected' })).toBe(1);
    });
  });

  describe('with EXTRACTION_RULES_FALLBACK=false', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp(env(llm, upstream, { EXTRACTION_RULES_FALLBACK: 'false' }));
    });

    beforeEach(() => llm.reset());
    afterAll(() => t.close());

    it('gives the turn up after the last try, shows it, and the retry route puts it back', async () => {
      llm.script(PROSE, PROSE);
      const profile = await profileAfterTurn(t, 'My name is Carla.');
      llm.script(PROSE, PROSE);
      await t.app.get(ExtractionWorker).sweep();

      const givenUp = await learningOf(t, profile.id);
      expect(givenUp.profile.traits).toEqual([]);
      expect(givenUp.learning).toEqual({
        extractor: 'llm',
        rulesFallback: false,
        pendingMessages: 0,
        failedMessages: 1,
        fellBackMessages: 0,
        lastError: expect.stringMatching(/unusable answer/),
        lastErrorAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      const metrics = parsePrometheusText((await t.api().get('/metrics').expect(200)).text);
      expect(valueOf(metrics, 'pms_extraction_failures_total', { cause: 'unusable_answer' })).toBe(2);

      llm.script(
        llmAnswer(
          JSON.stringify({ traits: [{ key: 'name', value: 'Carla', confidence: 0.9 }], memories: [] }),
        ),
      );
      const retry = await t.api().post(`/api/profiles/${profile.id}/extraction/retry`).expect(200);
      expect(retry.body).toEqual({ requeued: 1 });
      await t.drain();
      const learnt = await learningOf(t, profile.id);
      expect(learnt.profile.traits).toEqual([expect.objectContaining({ key: 'name', value: 'Carla' })]);
      expect(learnt.learning).toMatchObject({
        pendingMessages: 0,
        failedMessages: 0,
        lastError: null,
        lastErrorAt: null,
      });
    });
  });
});
