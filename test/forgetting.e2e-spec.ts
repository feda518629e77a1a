import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeOpenAI, fakeEmbedding, LooseJson, startFakeOpenAI } from './support/fake-openai-upstream';
import { makeMemory, makeProfile } from './support/factories';
import { ProxiedTestApp, startProxiedTestApp, startTestApp, TestApp } from './support/test-app';

const ALICE = 'My name is Alice. I am allergic to peanuts. I love sushi. I live in Berlin.';

/** What was deleted or replaced never reaches the model again (both databases). */
describe('Forgetting', () => {
  let t: ProxiedTestApp;
  let seq = 0;
  const nextUser = () => `forgetting-user-${++seq}`;

  beforeAll(async () => {
    t = await startProxiedTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const api = () => t.admin();
  const ingest = (profileId: string, data: string) =>
    api().post(`/api/profiles/${profileId}/ingest`).send({ data }).expect(200);
  const memories = async (profileId: string, include = '') =>
    (await api().get(`/api/profiles/${profileId}/memories${include}`).expect(200)).body
      .memories as LooseJson[];
  const traits = async (profileId: string) =>
    (await api().get(`/api/profiles/${profileId}/traits`).expect(200)).body.traits as LooseJson[];
  const contextText = async (profileId: string, question = 'What do you know about me?') =>
    (await api().post(`/api/profiles/${profileId}/context`).send({ question }).expect(200)).body
      .text as string;
  const summaryOf = async (profileId: string) =>
    (await api().get(`/api/profiles/${profileId}`).expect(200)).body.profile.summary as string;
  /** The system message the upstream got for a chat of the user (no learning from it). */
  const injectedFor = async (userId: string, question: string) => {
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', userId)
      .send({
        model: 'm',
        messages: [{ role: 'user', content: question }],
        service: { skipExtraction: true },
      })
      .expect(200);
    return (t.fake.requests.at(-1)!.body.messages[0]?.content as string) ?? '';
  };

  async function aliceProfile(userId: string) {
    const profile = await makeProfile(t, userId);
    await ingest(profile.id, ALICE);
    expect(await summaryOf(profile.id)).toContain('peanuts');
    expect(await contextText(profile.id)).toContain('Alice');
    return profile;
  }

  describe('the automatic summary', () => {
    it('says nothing of memories and traits deleted through the API, in the context and the next chat', async () => {
      const userId = nextUser();
      const profile = await aliceProfile(userId);
      for (const memory of await memories(profile.id)) {
        await api().delete(`/api/profiles/${profile.id}/memories/${memory.id}`).expect(200);
      }
      for (const trait of await traits(profile.id)) {
        await api().delete(`/api/profiles/${profile.id}/traits/${trait.key}`).expect(200);
      }
      expect(await summaryOf(profile.id)).toBe('');
      for (const text of [await contextText(profile.id), await injectedFor(userId, 'Who am I?')]) {
        for (const word of ['Alice', 'peanuts', 'sushi', 'Berlin']) expect(text).not.toContain(word);
      }
    });

    it('drops a memory deleted through the MCP forget tool and keeps the rest', async () => {
      const userId = nextUser();
      const profile = await aliceProfile(userId);
      const peanuts = (await memories(profile.id)).find((memory) => /peanuts/.test(memory.content))!;
      const client = new Client({ name: 'forgetting-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
          requestInit: { headers: { 'X-Service-Id': userId } },
        }),
      );
      try {
        const result = await client.callTool({ name: 'forget', arguments: { memoryId: peanuts.id } });
        expect(result.isError).toBeFalsy();
      } finally {
        await client.close();
      }
      const summary = await summaryOf(profile.id);
      expect(summary).not.toContain('peanuts');
      expect(summary).toContain('Alice');
      expect(await contextText(profile.id, 'Can I eat peanuts?')).not.toContain('peanuts');
    });

    it('follows an edited memory and a trait changed by hand, but leaves a summary written by hand', async () => {
      const profile = await aliceProfile(nextUser());
      const peanuts = (await memories(profile.id)).find((memory) => /peanuts/.test(memory.content))!;
      await api()
        .patch(`/api/profiles/${profile.id}/memories/${peanuts.id}`)
        .send({ content: 'Has a food allergy' })
        .expect(200);
      await api().put(`/api/profiles/${profile.id}/traits/name`).send({ value: 'Alicia' }).expect(200);
      const summary = await summaryOf(profile.id);
      expect(summary).not.toContain('peanuts');
      expect(summary).toContain('Has a food allergy');
      expect(summary).toContain('Alicia');

      await api()
        .patch(`/api/profiles/${profile.id}`)
        .send({ summary: 'Written by the operator.' })
        .expect(200);
      const other = await makeMemory(t, profile.id, { content: 'Likes trains' });
      await api().delete(`/api/profiles/${profile.id}/memories/${other.id}`).expect(200);
      expect(await summaryOf(profile.id)).toBe('Written by the operator.');
    });

    it('follows a fact superseded by extraction at once, not after SUMMARY_INTERVAL_MINUTES', async () => {
      const profile = await aliceProfile(nextUser());
      await ingest(profile.id, 'I moved to Lisbon last month.');
      const summary = await summaryOf(profile.id);
      expect(summary).toContain('Lisbon');
      expect(summary).not.toContain('Berlin');
    });
  });

  describe('an edited memory', () => {
    const DIMENSIONS = 8;
    let embedder: FakeOpenAI;
    let e: TestApp;

    beforeAll(async () => {
      embedder = await startFakeOpenAI({ embeddingDimensions: DIMENSIONS });
      e = await startTestApp({
        UPSTREAM_BASE_URL: embedder.url,
        UPSTREAM_API_KEY: 'sk-test',
        EXTRACTOR: 'heuristic',
        EMBEDDINGS_MODEL: 'hash-embedding',
      });
    });

    afterAll(async () => {
      await e.close();
      await embedder.close();
    });

    const storedVector = async (memoryId: string) => {
      const rows: Array<{ embedding: number[] | null }> = await e.dataSource.query(
        `SELECT embedding FROM memory_embeddings WHERE memory_id = $1`,
        [memoryId],
      );
      return rows[0]?.embedding ?? null;
    };
    const embedded = () =>
      embedder.requests
        .filter((request) => request.path === '/v1/embeddings')
        .flatMap((request) => request.body.input as string[]);
    const expectVectorOf = (vector: number[] | null, text: string) => {
      expect(vector).not.toBeNull();
      fakeEmbedding(text, DIMENSIONS).forEach((value, index) => expect(vector![index]).toBeCloseTo(value, 5));
    };

    it('has the embedding of its new content, never of the old one', async () => {
      const profile = await makeProfile(e, nextUser());
      const memory = await makeMemory(e, profile.id, { content: 'My passport number is P1234567' });
      await e.drain();
      expectVectorOf(await storedVector(memory.id), 'My passport number is P1234567');

      embedder.reset();
      await e
        .admin()
        .patch(`/api/profiles/${profile.id}/memories/${memory.id}`)
        .send({ content: 'Travel document details removed' })
        .expect(200);
      await e.drain();
      expect(embedded()).toEqual(['Travel document details removed']);
      expectVectorOf(await storedVector(memory.id), 'Travel document details removed');
    });
  });
});
