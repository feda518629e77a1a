import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildService, emptyServerDatabase } from './support/child-service';
import { fakeEnv } from './support/fake-env';
import { FakeOpenAI, LooseJson, startFakeOpenAI } from './support/fake-openai-upstream';
import {
  analysedText,
  eventually,
  extractionAnswer,
  extractionRequests,
  llmAnswer,
} from './support/fake-llm';

/**
 * The built service in a child process, killed with SIGKILL while a recorded turn is being extracted:
 * after a restart the turn is extracted, exactly once. Runs on the embedded database on disk, or on the
 * PostgreSQL server when DATABASE_URL is set.
 */
describe('durable background extraction across a crash', () => {
  let upstream: FakeOpenAI;
  let llm: FakeOpenAI;
  let dataDir: string;
  let service: ChildService | undefined;

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    llm = await startFakeOpenAI();
    dataDir = mkdtempSync(join(tmpdir(), 'pms-durability-'));
    await emptyServerDatabase();
  });

  afterAll(async () => {
    await service?.stop();
    await llm.close();
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async () => {
    service = await ChildService.start({
      DATA_DIR: dataDir,
      ...fakeEnv({ upstream, llm }),
      EXTRACTION_SWEEP_INTERVAL_MS: '0',
      // on the server the killed process's claim must run out before the batch is taken over
      EXTRACTION_LEASE_MS: '2000',
    });
    await service.ready();
    return service;
  };

  const api = async (
    path: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const res = await fetch(`${service!.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'content-type': 'application/json', ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as LooseJson };
  };

  const chat = (content: string) =>
    api('/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-service-id': 'durable-user' },
      body: { model: 'fake-model', messages: [{ role: 'user', content }] },
    });

  it('extracts a turn exactly once after the process was killed during its extraction', async () => {
    await start();
    expect(
      (await api('/api/profiles', { method: 'POST', body: { externalId: 'durable-user' } })).status,
    ).toBe(201);
    // A summary by hand keeps summary calls out of the LLM's request count.
    await api('/api/profiles/durable-user', { method: 'PATCH', body: { summary: 'By hand.' } });

    llm.script({ kind: 'hang' });
    upstream.script(llmAnswer('Nice to meet you, Anna.'));
    expect((await chat('My name is Anna. I have two kids.')).status).toBe(200);
    await llm.waitForRequests(1, 10_000); // recorded, and its extraction under way
    service!.process.kill('SIGKILL');
    expect((await service!.exited).signal).toBe('SIGKILL');

    llm.script(
      extractionAnswer(
        [{ key: 'name', value: 'Anna', confidence: 0.9 }],
        [{ content: 'The user has two children.', type: 'fact', importance: 0.8 }],
      ),
    );
    await start(); // the turn is still pending: taken over at boot (embedded) or when its claim runs out
    const profile = await eventually(
      () => api('/api/profiles/durable-user'),
      (res) => res.body.profile?.traits?.length === 1,
    );
    expect(profile.body.profile.traits).toEqual([expect.objectContaining({ key: 'name', value: 'Anna' })]);
    expect(profile.body.recentMemories).toEqual([
      expect.objectContaining({ content: 'The user has two children.' }),
    ]);
    expect(extractionRequests(llm).map(analysedText)).toEqual([
      'My name is Anna. I have two kids.',
      'My name is Anna. I have two kids.',
    ]);

    // Restart once more and record a new turn: only the new turn is extracted, the old one not again.
    await service!.stop();
    llm.script(extractionAnswer([{ key: 'timezone', value: 'Oslo', confidence: 0.9 }]));
    await start();
    upstream.script(llmAnswer('Oslo is lovely.'));
    expect((await chat('I live in Oslo.')).status).toBe(200);
    await eventually(
      () => api('/api/profiles/durable-user'),
      (res) => res.body.profile?.traits?.length === 2,
    );
    expect(extractionRequests(llm).map(analysedText)).toEqual([
      'My name is Anna. I have two kids.',
      'My name is Anna. I have two kids.',
      'I live in Oslo.',
    ]);
    const exported = await api('/api/profiles/durable-user/export');
    expect(exported.body.memories).toHaveLength(1);
    expect(exported.body.messages).toHaveLength(4);
  });
});
