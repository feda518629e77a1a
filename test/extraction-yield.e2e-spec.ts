import { randomUUID } from 'node:crypto';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';
import { llmAnswer } from './support/fake-llm';
import { parsePrometheusText, valueOf } from './support/prometheus-text';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Background extraction yields to answers that keep the process busy: its stored turns wait in the
 * queue and are learnt from once the answers are over, or once the wait's bound has passed. With
 * EXTRACTION_YIELD_UTILIZATION=0 any answer in flight counts as busy, so the tests need no CPU load.
 */
describe('background extraction yields to busy answers', () => {
  let upstream: FakeOpenAI;

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
  });

  beforeEach(() => upstream.reset());

  afterAll(async () => {
    await upstream.close();
  });

  const start = (yieldMaxMs: string) =>
    startTestApp({
      EXTRACTOR: 'heuristic',
      UPSTREAM_BASE_URL: upstream.url,
      UPSTREAM_API_KEY: 'sk-upstream',
      EXTRACTION_SWEEP_INTERVAL_MS: '0',
      EXTRACTION_YIELD_UTILIZATION: '0',
      EXTRACTION_YIELD_MAX_MS: yieldMaxMs,
    });

  /** A stream whose upstream stops writing after its first piece, so the answer stays in flight. */
  async function openStream(t: TestApp): Promise<AbortController> {
    upstream.script({ kind: 'stream', chunks: ['Thinking'], then: 'hang' });
    const controller = new AbortController();
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-id': `streaming-${randomUUID()}` },
      body: JSON.stringify({
        model: 'fake-model',
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    return controller;
  }

  async function learntTurn(t: TestApp): Promise<string> {
    const userId = `learner-${randomUUID()}`;
    upstream.script(llmAnswer('Nice to meet you.'));
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', userId)
      .send({ model: 'fake-model', messages: [{ role: 'user', content: 'My name is Anna.' }] })
      .expect(200);
    return userId;
  }

  const yields = async (t: TestApp) =>
    valueOf(
      parsePrometheusText((await t.api().get('/metrics').expect(200)).text),
      'pms_extraction_yields_total',
    );

  const state = async (t: TestApp, userId: string) => {
    const [row]: Array<{ pending: number; names: string[] }> = await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM messages m WHERE m.profile_id = p.id AND m.extracted_at IS NULL) AS pending,
              ARRAY(SELECT t.value #>> '{}' FROM traits t WHERE t.profile_id = p.id AND t.key = 'name') AS names
       FROM profiles p WHERE p.external_id = $1`,
      [userId],
    );
    return row;
  };

  /**
   * An app with this EXTRACTION_YIELD_MAX_MS, a stream held open on it and a learnt turn recorded
   * meanwhile; `check` gets the app, the turn's user and what ends the stream.
   */
  async function whileStreamOpen(
    yieldMaxMs: string,
    check: (t: TestApp, userId: string, endStream: () => void) => Promise<void>,
  ): Promise<void> {
    const t = await start(yieldMaxMs);
    let stream: AbortController | undefined;
    try {
      stream = await openStream(t);
      const open = stream;
      await check(t, await learntTurn(t), () => open.abort());
    } finally {
      stream?.abort();
      await t.close();
    }
  }

  it('keeps a turn stored and unlearnt while an answer is in flight, and learns it when the answer ends', () =>
    whileStreamOpen('600000', async (t, userId, endStream) => {
      const deadline = Date.now() + 10_000;
      while ((await yields(t)) < 1) {
        if (Date.now() > deadline) throw new Error('extraction never yielded');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await state(t, userId)).toEqual({ pending: 1, names: [] }); // the user's message; the reply is stored extracted

      endStream();
      await t.drain();
      expect(await state(t, userId)).toEqual({ pending: 0, names: ['Anna'] });
    }));

  it('learns anyway once the wait has lasted EXTRACTION_YIELD_MAX_MS, the answer still in flight', () =>
    whileStreamOpen('300', async (t, userId) => {
      await t.drain();
      expect(await state(t, userId)).toEqual({ pending: 0, names: ['Anna'] });
      expect(await yields(t)).toBeGreaterThanOrEqual(1);
    }));
});
