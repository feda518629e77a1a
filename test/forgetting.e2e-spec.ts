import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fakeEmbedding, LooseJson } from './support/fake-openai-upstream';
import { llmAnswer } from './support/fake-llm';
import { ingestText, listMemories, listTraits, makeMemory, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';
import { chatTurn, injectedFor } from './support/clients';

const ALICE = 'My name is Alice. I am allergic to peanuts. I love sushi. I live in Berlin.';

/** What was deleted or replaced never reaches the model again (both databases). */
describe('Forgetting', () => {
  const t = useTestApp({ upstream: 'openai' });
  let seq = 0;
  const nextUser = () => `forgetting-user-${++seq}`;

  const api = () => t.admin();
  const memories = (profileId: string, include = '') => listMemories(t, profileId, include);
  const traits = (profileId: string) => listTraits(t, profileId);
  const contextText = async (profileId: string, question = 'What do you know about me?') =>
    (await api().post(`/api/profiles/${profileId}/context`).send({ question }).expect(200)).body
      .text as string;
  const historyOf = async (profileId: string, memoryId: string) =>
    (await api().get(`/api/profiles/${profileId}/memories/${memoryId}/history`).expect(200)).body
      .history as LooseJson[];
  const summaryOf = async (profileId: string) =>
    (await api().get(`/api/profiles/${profileId}`).expect(200)).body.profile.summary as string;
  async function aliceProfile(userId: string) {
    const profile = await makeProfile(t, userId);
    await ingestText(t, profile.id, ALICE);
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
      for (const text of [await contextText(profile.id), await injectedFor(t, userId, 'Who am I?')]) {
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
      await ingestText(t, profile.id, 'I moved to Lisbon last month.');
      const summary = await summaryOf(profile.id);
      expect(summary).toContain('Lisbon');
      expect(summary).not.toContain('Berlin');
    });
  });

  describe('an edited memory', () => {
    const DIMENSIONS = 8;
    const e = useTestApp({
      upstream: 'openai',
      upstreamOptions: { embeddingDimensions: DIMENSIONS },
      env: { EMBEDDINGS_MODEL: 'hash-embedding' },
    });

    const storedVector = async (memoryId: string) => {
      const rows: Array<{ embedding: number[] | null }> = await e.dataSource.query(
        `SELECT embedding FROM memory_embeddings WHERE memory_id = $1`,
        [memoryId],
      );
      return rows[0]?.embedding ?? null;
    };
    const embedded = () =>
      e.upstream.requests
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

      e.upstream.reset();
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

  describe('supersession chains', () => {
    const byContent = (all: LooseJson[], content: string) =>
      all.find((memory) => memory.content === content)!;

    it('supersedes a memory written through the API with a learnt one of the same kind', async () => {
      const profile = await makeProfile(t, nextUser());
      const lisbon = await makeMemory(t, profile.id, { content: 'Lives in Lisbon' });
      await ingestText(t, profile.id, 'I moved to Berlin last month.');
      const all = await memories(profile.id, '?include=superseded');
      const berlin = byContent(all, 'User moved to Berlin last month.');
      expect(byContent(all, 'Lives in Lisbon')).toEqual(
        expect.objectContaining({ id: lisbon.id, supersededBy: berlin.id }),
      );
      expect((await memories(profile.id)).map((memory) => memory.content)).toEqual([berlin.content]);
      expect(await contextText(profile.id, 'Where do I live?')).not.toContain('Lisbon');
    });

    it('makes a fact said again current, and the predecessor of a deleted memory current again', async () => {
      const profile = await makeProfile(t, nextUser());
      await ingestText(t, profile.id, 'I live in Paris.');
      await ingestText(t, profile.id, 'I live in Berlin.');
      await ingestText(t, profile.id, 'I live in Paris.');
      let all = await memories(profile.id, '?include=superseded');
      const paris = byContent(all, 'User lives in Paris.');
      const berlin = byContent(all, 'User lives in Berlin.');
      expect(paris).toEqual(expect.objectContaining({ supersededBy: null, supersededAt: null }));
      expect(berlin).toEqual(expect.objectContaining({ supersededBy: paris.id }));

      await api().delete(`/api/profiles/${profile.id}/memories/${paris.id}`).expect(200);
      all = await memories(profile.id, '?include=superseded');
      expect(all).toEqual([
        expect.objectContaining({ id: berlin.id, supersededBy: null, supersededAt: null }),
      ]);
      expect((await historyOf(profile.id, berlin.id))[0]).toEqual(
        expect.objectContaining({
          change: 'reverted',
          newValue: expect.objectContaining({ supersededBy: null }),
        }),
      );
      const text = await contextText(profile.id, 'Where do I live?');
      expect(text).toContain('User lives in Berlin.');
      expect(text).not.toContain('User lives in Paris.'); // the location trait may still say Paris
    });

    it('hands the memories a deleted one superseded on to what superseded it', async () => {
      const profile = await makeProfile(t, nextUser());
      await ingestText(t, profile.id, 'I work at Acme.');
      await ingestText(t, profile.id, 'I work at Globex.');
      await ingestText(t, profile.id, 'I work at Initech.');
      let all = await memories(profile.id, '?include=superseded');
      const [acme, globex, initech] = ['Acme', 'Globex', 'Initech'].map((name) =>
        byContent(all, `User works at ${name}.`),
      );
      expect(acme.supersededBy).toBe(globex.id);
      await api().delete(`/api/profiles/${profile.id}/memories/${globex.id}`).expect(200);
      all = await memories(profile.id, '?include=superseded');
      expect(byContent(all, acme.content)).toEqual(expect.objectContaining({ supersededBy: initech.id }));
      expect(all.every((memory) => (memory.supersededBy === null) === (memory.supersededAt === null))).toBe(
        true,
      );
    });
  });

  describe('purge', () => {
    it('removes a memory from the history too, keeping that it existed, when and by whom', async () => {
      const profile = await makeProfile(t, nextUser());
      await ingestText(t, profile.id, 'I live in Oslo.');
      const passport = await makeMemory(t, profile.id, { content: 'Lives in Bergen, passport P1234567' });
      await ingestText(t, profile.id, 'I live in Oslo.'); // supersedes the passport memory, naming its content
      const oslo = (await memories(profile.id))[0];
      expect(JSON.stringify(await historyOf(profile.id, oslo.id))).toContain('P1234567');

      await api().delete(`/api/profiles/${profile.id}/memories/${passport.id}?purge=true`).expect(200);
      expect(JSON.stringify(await historyOf(profile.id, oslo.id))).not.toContain('P1234567');
      const history = await historyOf(profile.id, passport.id);
      expect(history).toEqual([
        expect.objectContaining({ change: 'purged', source: 'api', oldValue: null, newValue: null }),
      ]);
      expect(history[0].createdAt).toEqual(expect.any(String));
      const exported = (await api().get(`/api/profiles/${profile.id}/export`).expect(200)).body;
      expect(JSON.stringify(exported)).not.toContain('P1234567');
      const rows: unknown[] = await t.dataSource.query(
        `SELECT 1 FROM profile_history WHERE profile_id = $1 AND (old_value::text LIKE '%P1234567%' OR new_value::text LIKE '%P1234567%')`,
        [profile.id],
      );
      expect(rows).toEqual([]);
    });

    it('purges a trait, and refuses a purge that is neither true nor false', async () => {
      const profile = await makeProfile(t, nextUser());
      await api()
        .put(`/api/profiles/${profile.id}/traits/passport_number`)
        .send({ value: 'P1234567' })
        .expect(200);
      await api()
        .put(`/api/profiles/${profile.id}/traits/passport_number`)
        .send({ value: 'P7654321' })
        .expect(200);
      const refused = await api()
        .delete(`/api/profiles/${profile.id}/traits/passport_number?purge=yes`)
        .expect(400);
      expect(refused.body.error).toEqual(expect.objectContaining({ code: 'invalid_purge' }));
      await api().delete(`/api/profiles/${profile.id}/traits/passport_number?purge=true`).expect(200);
      const history = (
        await api().get(`/api/profiles/${profile.id}/traits/passport_number/history`).expect(200)
      ).body.history as LooseJson[];
      expect(history).toEqual([expect.objectContaining({ change: 'purged', source: 'api', oldValue: null })]);
      const exported = (await api().get(`/api/profiles/${profile.id}/export`).expect(200)).body;
      expect(JSON.stringify(exported)).not.toMatch(/P1234567|P7654321/);
    });
  });

  describe('supersession chains with the LLM extractor', () => {
    const l = useTestApp({
      upstream: 'openai',
      extractor: 'llm',
      env: { LOG_LEVEL: 'error', EXTRACTION_LLM_ATTEMPTS: '1', EXTRACTION_SWEEP_INTERVAL_MS: '0' },
    });

    const learn = async (userId: string, content: string, memories: LooseJson[]) => {
      l.llm.script(llmAnswer(JSON.stringify({ traits: [], memories })));
      await chatTurn(l, userId, content);
    };
    const all = (profileId: string) => listMemories(l, profileId, '?include=superseded');
    // worded so that no fact kind is read from them: the chain alone decides
    const PARIS = "The user's home city is Paris.";
    const BERLIN = "The user's home city is Berlin.";
    const fact = (content: string, revision: Record<string, string> = {}) => ({
      content,
      type: 'fact',
      importance: 0.8,
      ...revision,
    });

    async function parisThenBerlin(userId: string) {
      await learn(userId, 'I live in Paris.', [fact(PARIS)]);
      const profile = (await l.admin().get(`/api/profiles/${userId}`).expect(200)).body.profile;
      const paris = (await all(profile.id))[0];
      await learn(userId, 'I moved to Berlin.', [fact(BERLIN, { action: 'supersede', memoryId: paris.id })]);
      const berlin = (await all(profile.id)).find((memory) => memory.content === BERLIN)!;
      expect((await all(profile.id)).find((memory) => memory.id === paris.id)!.supersededBy).toBe(berlin.id);
      return { profile, paris, berlin };
    }

    const current = async (profileId: string) =>
      (await all(profileId)).filter((memory) => memory.supersededAt === null).map((memory) => memory.content);

    it('makes a fact the LLM says was said again current, superseding what replaced it', async () => {
      const userId = nextUser();
      const { profile, paris, berlin } = await parisThenBerlin(userId);
      await learn(userId, 'I live in Paris again.', [
        fact(PARIS, { action: 'reinforce', memoryId: paris.id }),
      ]);
      expect(await current(profile.id)).toEqual([PARIS]);
      expect((await all(profile.id)).find((memory) => memory.id === berlin.id)!.supersededBy).toBe(paris.id);
      const text = (
        await l
          .admin()
          .post(`/api/profiles/${profile.id}/context`)
          .send({ question: 'Where do I live?' })
          .expect(200)
      ).body.text as string;
      expect(text).toContain('Paris');
      expect(text).not.toContain('Berlin');
    });

    it('keeps the repeated fact current when the LLM supersedes what replaced it', async () => {
      const userId = nextUser();
      const { profile, berlin } = await parisThenBerlin(userId);
      await learn(userId, 'I live in Paris again.', [
        fact(PARIS, { action: 'supersede', memoryId: berlin.id }),
      ]);
      expect(await current(profile.id)).toEqual([PARIS]);
    });

    it('makes the predecessor current again when the memory that superseded it is deleted', async () => {
      const { profile, paris, berlin } = await parisThenBerlin(nextUser());
      await l.admin().delete(`/api/profiles/${profile.id}/memories/${berlin.id}`).expect(200);
      expect(await all(profile.id)).toEqual([
        expect.objectContaining({ id: paris.id, supersededBy: null, supersededAt: null }),
      ]);
    });

    it('empties an LLM summary at a deletion and makes it due, never serving it stale', async () => {
      const userId = nextUser();
      await learn(userId, 'I live in Paris.', [fact(PARIS)]);
      const profile = (await l.admin().get(`/api/profiles/${userId}`).expect(200)).body.profile;
      await l.dataSource.query(
        `UPDATE profiles SET summary = 'The user lives in Paris.', summary_updated_at = now() WHERE id = $1`,
        [profile.id],
      );
      const [paris] = await all(profile.id);
      await l.admin().delete(`/api/profiles/${profile.id}/memories/${paris.id}`).expect(200);
      const after = (await l.admin().get(`/api/profiles/${profile.id}`).expect(200)).body.profile;
      expect(after).toEqual(expect.objectContaining({ summary: '', summaryUpdatedAt: null }));
    });
  });
});
