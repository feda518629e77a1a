import { splitIntoChunks } from '../src/extraction/text-chunks';
import { LLM_CHUNK_CHARS } from '../src/extraction/extraction.service';
import { expectEnvelope, listMemories, listTraits, makeProfile, makeProfileWith } from './support/factories';
import { analysedText, extractionAnswer, llmAnswer } from './support/fake-llm';
import { useTestApp } from './support/test-app';

const GOOD_ITEMS = {
  traits: [
    { key: 'name', value: 'Anna', confidence: 0.9 },
    { key: 'interests', value: ['hiking', 'jazz'], confidence: 0.8 },
  ],
  memories: [{ content: 'The user has two children.', type: 'fact', importance: 0.8 }],
};

/** Ingest with the LLM extractor, the LLM being a real HTTP fake scripted per test. */
describe('POST /api/profiles/:id/ingest (LLM extractor)', () => {
  const t = useTestApp({
    extractor: 'llm',
    env: {
      LLM_MODEL: 'extraction-model',
      LLM_TIMEOUT_MS: '400',
      EXTRACTION_LLM_ATTEMPTS: '3',
      EXTRACTION_RETRY_BASE_MS: '1',
      SUMMARY_INTERVAL_MINUTES: '60',
    },
  });

  /** A profile whose summary is written by hand, so that ingest makes no summary call to the LLM. */
  const profileWithoutSummaryCalls = async () =>
    (await makeProfileWith(t, { summary: 'By hand.' })).profile.id;

  const ingest = (profileId: string, body: Record<string, unknown>) =>
    t.api().post(`/api/profiles/${profileId}/ingest`).send(body);

  const storedTraits = async (profileId: string): Promise<Record<string, unknown>> =>
    Object.fromEntries((await listTraits(t, profileId)).map((trait) => [trait.key, trait.value]));
  const storedMemories = async (profileId: string): Promise<string[]> =>
    (await listMemories(t, profileId)).map((memory) => memory.content);

  it('asks once with json_schema, with the LLM settings, and stores the answer', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script(extractionAnswer(GOOD_ITEMS.traits, GOOD_ITEMS.memories));
    const res = await ingest(id, {
      data: 'Hi, I am Anna. I have two kids, and I love hiking and jazz.',
    }).expect(200);

    expect(t.llm.requests).toHaveLength(1);
    const [request] = t.llm.requests;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-llm');
    expect(request.body.model).toBe('extraction-model');
    expect(request.body.stream).toBeUndefined();
    expect(request.body.response_format.type).toBe('json_schema');
    expect(analysedText(request)).toBe('Hi, I am Anna. I have two kids, and I love hiking and jazz.');

    expect(res.body.extracted.traits).toEqual([
      { key: 'name', value: 'Anna', confidence: 0.9, action: 'create' },
      { key: 'interests', value: ['hiking', 'jazz'], confidence: 0.8, action: 'create' },
    ]);
    expect(res.body.extracted.memories).toEqual([
      expect.objectContaining({ content: 'The user has two children.', type: 'fact', importance: 0.8 }),
    ]);
    expect(res.body.extracted.stats).toEqual({ traitsCreated: 2, traitsUpdated: 0, memoriesCreated: 1 });
    expect(await storedTraits(id)).toEqual({ name: 'Anna', interests: ['hiking', 'jazz'] });
  });

  it('reads JSON inside a code fence with prose around it', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script(
      llmAnswer(`Sure! Here it is:\n\`\`\`json\n${JSON.stringify(GOOD_ITEMS)}\n\`\`\`\nAnything else?`),
    );
    const res = await ingest(id, { data: 'text' }).expect(200);
    expect(res.body.extracted.stats).toEqual({ traitsCreated: 2, traitsUpdated: 0, memoriesCreated: 1 });
  });

  it('drops invalid items and stores only the valid ones', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script(
      extractionAnswer(
        [
          { key: 'name', value: 'Anna', confidence: 0.9 },
          { key: 'shoe_size', value: 42, confidence: 0.9 }, // unknown key
          { key: 'communication_style', value: 'sarcastic', confidence: 0.9 }, // not an enum member
          { key: 'timezone', value: 'Berlin', confidence: 1.5 }, // out of range
          { key: 'interests', value: { a: 1 }, confidence: 0.9 }, // wrong type
        ],
        [
          { content: 'The user has two children.', type: 'fact', importance: 0.8 },
          { content: '   ', type: 'fact', importance: 0.5 }, // empty
          { content: 'Likes tea.', type: 'opinion', importance: 0.5 }, // unknown type
          { content: 'Runs marathons.', type: 'fact', importance: -1 }, // out of range
        ],
      ),
    );
    const res = await ingest(id, { data: 'text' }).expect(200);
    expect(res.body.extracted.traits).toEqual([
      { key: 'name', value: 'Anna', confidence: 0.9, action: 'create' },
    ]);
    expect(res.body.extracted.memories.map((memory: { content: string }) => memory.content)).toEqual([
      'The user has two children.',
    ]);
    expect(res.body.extracted.stats).toEqual({ traitsCreated: 1, traitsUpdated: 0, memoriesCreated: 1 });
    expect(await storedTraits(id)).toEqual({ name: 'Anna' });
    expect(await storedMemories(id)).toEqual(['The user has two children.']);
  });

  it('answers 500 extraction_error when every try gives garbage, and stores nothing', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script(llmAnswer('I am not JSON'), llmAnswer('{"traits": [ broken'), {
      kind: 'json',
      body: { no: 'choices' },
    });
    const res = await ingest(id, { data: 'My name is Anna.' }).expect(500);
    expect(expectEnvelope(res.body, 'extraction_error').type).toBe('internal_error');
    expect(t.llm.requests).toHaveLength(3);
    expect(await storedTraits(id)).toEqual({});
    expect(await storedMemories(id)).toEqual([]);
  });

  it('retries a 5xx and a 429, then succeeds', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script(
      { kind: 'error', status: 503 },
      { kind: 'error', status: 429, headers: { 'retry-after': '0' } },
      extractionAnswer(GOOD_ITEMS.traits),
    );
    const res = await ingest(id, { data: 'text' }).expect(200);
    expect(res.body.extracted.stats.traitsCreated).toBe(2);
    expect(t.llm.requests).toHaveLength(3);
  });

  it('gives up a hanging call after LLM_TIMEOUT_MS and retries it', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script({ kind: 'hang' }, extractionAnswer(GOOD_ITEMS.traits));
    const started = Date.now();
    const res = await ingest(id, { data: 'text' }).expect(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(res.body.extracted.stats.traitsCreated).toBe(2);
    expect(t.llm.requests).toHaveLength(2);
    await t.llm.waitForClientClose(0);
  });

  it('answers 500 extraction_error when the LLM keeps hanging or is unreachable', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script({ kind: 'hang' }, { kind: 'disconnect' }, { kind: 'hang' });
    const res = await ingest(id, { data: 'text' }).expect(500);
    expectEnvelope(res.body, 'extraction_error');
    expect(t.llm.requests).toHaveLength(3);
  });

  it('does not retry a refused key (401)', async () => {
    const id = await profileWithoutSummaryCalls();
    t.llm.script({ kind: 'error', status: 401 });
    const res = await ingest(id, { data: 'text' }).expect(500);
    expectEnvelope(res.body, 'extraction_error');
    expect(t.llm.requests).toHaveLength(1);
  });

  it('extracts a long document in pieces and merges them', async () => {
    const id = await profileWithoutSummaryCalls();
    const paragraph = `${'I walk by the river every morning and think about many things. '.repeat(40)}\n\n`;
    let data = '';
    while (Buffer.byteLength(data + paragraph) <= 102_400) data += paragraph;
    const pieces = splitIntoChunks(data, LLM_CHUNK_CHARS).length;
    expect(pieces).toBeGreaterThan(3);
    t.llm.script(
      ...Array.from({ length: pieces }, (_, i) =>
        extractionAnswer(
          [{ key: 'interests', value: [`topic ${i % 3}`], confidence: 0.8 }],
          [{ content: `Fact number ${i}.`, type: 'fact', importance: 0.5 }],
        ),
      ),
    );
    const res = await ingest(id, { data }).expect(200);
    expect(t.llm.requests).toHaveLength(pieces);
    expect(t.llm.requests.every((request) => analysedText(request).length <= LLM_CHUNK_CHARS)).toBe(true);
    expect(res.body.extracted.traits).toEqual([
      {
        key: 'interests',
        value: expect.arrayContaining(['topic 0', 'topic 1', 'topic 2']),
        confidence: 0.8,
        action: 'create',
      },
    ]);
    expect(res.body.extracted.stats).toEqual({ traitsCreated: 1, traitsUpdated: 0, memoriesCreated: pieces });
  });

  it('writes the summary with one LLM call after a change', async () => {
    const profile = await makeProfile(t);
    t.llm.script(
      extractionAnswer(GOOD_ITEMS.traits),
      llmAnswer('  The user, Anna, enjoys hiking and jazz.  '),
    );
    const res = await ingest(profile.id, { data: 'text' }).expect(200);
    expect(res.body.profile.summary).toBe('The user, Anna, enjoys hiking and jazz.');
    expect(t.llm.requests).toHaveLength(2);
    expect(t.llm.requests[1].body.messages[1].content).toContain('"Anna"');
    expect(t.llm.requests[1].body.response_format).toBeUndefined();
  });

  it('keeps the old summary when the summary call fails', async () => {
    const profile = await makeProfile(t);
    t.llm.script(extractionAnswer(GOOD_ITEMS.traits), { kind: 'error', status: 500 });
    const res = await ingest(profile.id, { data: 'text' }).expect(200);
    expect(res.body.profile.summary).toBe('');
    expect(res.body.extracted.stats.traitsCreated).toBe(2);
  });

  // Last: the extractor remembers a rejected format for the rest of the process.
  it('falls back to json_object, then plain instructions, when the provider rejects response_format', async () => {
    const id = await profileWithoutSummaryCalls();
    const rejection = {
      error: {
        message:
          "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        type: 'invalid_request_error',
        param: 'response_format',
        code: null,
      },
    };
    t.llm.script(
      { kind: 'error', status: 400, body: rejection },
      { kind: 'error', status: 400, body: rejection },
      extractionAnswer(GOOD_ITEMS.traits),
      extractionAnswer([{ key: 'timezone', value: 'Berlin', confidence: 0.9 }]),
    );
    await ingest(id, { data: 'text' }).expect(200);
    await ingest(id, { data: 'more text' }).expect(200);
    expect(t.llm.requests.map((request) => request.body.response_format?.type ?? 'none')).toEqual([
      'json_schema',
      'json_object',
      'none',
      'none',
    ]);
    expect(t.llm.requests[2].body.messages[0].content).toContain('Answer with the JSON object only');
    expect(await storedTraits(id)).toEqual({
      name: 'Anna',
      interests: ['hiking', 'jazz'],
      timezone: 'Berlin',
    });
  });
});
