import { ExtractionWorker } from '../src/extraction/extraction-worker';
import { ISO_TIMESTAMP, makeProfileWith } from './support/factories';
import { llmAnswer } from './support/fake-llm';
import { LooseJson } from './support/fake-openai-upstream';
import { parsePrometheusText, valueOf } from './support/prometheus-text';
import { SuiteApp, TestApp, useTestApp } from './support/test-app';
import { chatTurn } from './support/clients';

type LlmApp = SuiteApp<'openai', 'llm'>;

/** How small local models often answer an extraction request: prose, no JSON. */
const PROSE = llmAnswer('Sure! The user seems to be called Anna and she lives in Lisbon. Anything else?');

const env = (extra: Record<string, string> = {}) => ({
  EXTRACTION_LLM_ATTEMPTS: '2',
  EXTRACTION_RETRY_BASE_MS: '0',
  EXTRACTION_MAX_ATTEMPTS: '2',
  EXTRACTION_SWEEP_INTERVAL_MS: '0',
  EXTRACTION_BACKOFF_MS: '0',
  ...extra,
});

/** Learning with an LLM that answers in prose: the rules take over, and the profile and /metrics say so. */
describe('learning when the LLM fails', () => {
  /** A profile with a summary written by hand (no summary call), after one chat turn. */
  async function profileAfterTurn(t: LlmApp, content: string) {
    const { profile } = await makeProfileWith(t, { summary: 'By hand.' });
    await chatTurn(t, profile.externalId!, content, 'Nice to meet you, Anna.');
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
    const t = useTestApp({ upstream: 'openai', extractor: 'llm', env: env() });

    it('learns from the turn with the rules after the last try, and shows what happened', async () => {
      t.llm.script(PROSE, PROSE);
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
      t.llm.script(PROSE, PROSE);
      await t.app.get(ExtractionWorker).sweep();
      expect(t.llm.requests).toHaveLength(4);
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
      t.llm.script(rejected, rejected, rejected);
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
    const t = useTestApp({
      upstream: 'openai',
      extractor: 'llm',
      env: env({ EXTRACTION_RULES_FALLBACK: 'false' }),
    });

    it('gives the turn up after the last try, shows it, and the retry route puts it back', async () => {
      t.llm.script(PROSE, PROSE);
      const profile = await profileAfterTurn(t, 'My name is Carla.');
      t.llm.script(PROSE, PROSE);
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

      t.llm.script(
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
