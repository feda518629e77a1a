import { askForInjectedIds, makeMemory, makeProfile } from './support/factories';
import { FakeOpenAI } from './support/fake-openai-upstream';
import { TestApp, useTestApp } from './support/test-app';

/**
 * A toy embeddings model with meaning: each dimension is a topic, a text points at the topics of its
 * words. "pet" and "puppy" share no word stem, but share a topic.
 */
const TOPICS = [
  ['pet', 'pets', 'puppy', 'dog', 'cat', 'kitten', 'animal'],
  ['car', 'vehicle', 'tesla', 'drive', 'drives'],
  ['food', 'pizza', 'eat', 'dinner', 'sushi'],
];
function topicEmbedding(text: string, dimensions: number): number[] | null {
  if (text.includes(REFUSED)) return null;
  const vector = new Array<number>(dimensions).fill(0);
  vector[dimensions - 1] = 0.1; // never the zero vector
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    TOPICS.forEach((topic, index) => {
      if (topic.includes(word)) vector[index] += 1;
    });
  }
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

/** The toy model refuses a text containing this, as a provider refuses one bad input of a batch. */
const REFUSED = 'REFUSED-INPUT';

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const embeddingCalls = (fake: FakeOpenAI) => fake.requests.filter((r) => r.path === '/v1/embeddings');

async function pgvectorInstalled(t: TestApp): Promise<boolean> {
  const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`);
  return rows.length > 0;
}

/**
 * Optional semantic ranking (EMBEDDINGS_MODEL), on any database: PGlite has pgvector, the PostgreSQL
 * server of the test machines does not, so there the cosine is computed in plain SQL. The suite runs the
 * same on both.
 */
describe('Semantic ranking', () => {
  const t = useTestApp({
    upstream: 'openai',
    upstreamKey: 'sk-test',
    upstreamOptions: { embed: topicEmbedding, embeddingDimensions: 8 },
    env: {
      EMBEDDINGS_MODEL: 'topic-embedding',
      EMBEDDINGS_TIMEOUT_MS: '500',
      CONTEXT_MAX_MEMORIES: '3',
      EXTRACTION_SWEEP_INTERVAL_MS: '200',
    },
  });

  beforeAll(async () => {
    // the engine follows the database: pgvector on PGlite, plain SQL on this server
    expect(await pgvectorInstalled(t)).toBe(process.env.DATABASE_URL === undefined);
  });

  const ask = (userId: string, question: string) => askForInjectedIds(t, userId, question);

  const storedEmbeddings = (
    profileId: string,
  ): Promise<Array<{ memory_id: string; model: string; size: number }>> =>
    t.dataSource.query(
      `SELECT memory_id, model, cardinality(embedding) AS size FROM memory_embeddings
       WHERE profile_id = $1 AND (embedding IS NOT NULL OR error IS NOT NULL)`,
      [profileId],
    );

  /** A profile whose one pet memory shares no word with the question, among more important others. */
  async function petProfile(userId: string) {
    const profile = await makeProfile(t, userId);
    for (let i = 0; i < 12; i++)
      await makeMemory(t, profile.id, { content: `Visited museum number ${i} downtown`, importance: 0.9 });
    const puppy = await makeMemory(t, profile.id, {
      content: 'Adopted a puppy named Rex last spring',
      importance: 0.2,
    });
    await t.drain();
    return { profile, puppy };
  }

  it('embeds memories as they are stored, with the configured model', async () => {
    const { profile, puppy } = await petProfile('embedded-user');
    const rows = await storedEmbeddings(profile.id);
    expect(rows).toHaveLength(13);
    expect(rows.every((row) => row.model === 'topic-embedding' && Number(row.size) === 8)).toBe(true);
    const calls = embeddingCalls(t.upstream);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls[0].headers.authorization).toBe('Bearer sk-test');
    expect(calls.flatMap((call) => call.body.input as string[])).toContain(puppy.content);
    expect(calls[0].body).toMatchObject({ model: 'topic-embedding', encoding_format: 'float' });
  });

  it('embeds the memories that ingest and background extraction learn, in one batch per extraction', async () => {
    const profile = await makeProfile(t, 'learned-user');
    const res = await t
      .admin()
      .post(`/api/profiles/${profile.id}/ingest`)
      .send({ data: 'I live in Berlin. I love hiking. I have two kids.' })
      .expect(200);
    const learned: string[] = res.body.extracted.memories.map((m: { id: string }) => m.id);
    expect(learned.length).toBeGreaterThan(1);
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', 'learned-user')
      .send({ model: 'm', messages: [{ role: 'user', content: 'I adopted a kitten called Mochi.' }] })
      .expect(200);
    await t.drain();
    const memories = await t.admin().get(`/api/profiles/${profile.id}/memories`).expect(200);
    const all: string[] = memories.body.memories.map((m: { id: string }) => m.id);
    expect(all.length).toBeGreaterThan(learned.length);
    const embedded = (await storedEmbeddings(profile.id)).map((row) => row.memory_id);
    expect(embedded.sort()).toEqual(all.sort());
    const batchSizes = embeddingCalls(t.upstream).map((call) => (call.body.input as string[]).length);
    expect(batchSizes[0]).toBe(learned.length);
  });

  it('injects the memory that answers by meaning when no word is shared', async () => {
    const { puppy } = await petProfile('meaning-user');
    t.upstream.reset();
    const ids = await ask('meaning-user', 'What kind of pet do I have?');
    expect(ids[0]).toBe(puppy.id);
    expect(embeddingCalls(t.upstream)).toHaveLength(1);
    expect(embeddingCalls(t.upstream)[0].body.input).toEqual(['What kind of pet do I have?']);
  });

  it('still ranks by words: a memory close in words and meaning beats one close in meaning only', async () => {
    const profile = await makeProfile(t, 'words-user');
    const sushi = await makeMemory(t, profile.id, { content: 'Ordered sushi with Maria on Friday' });
    await makeMemory(t, profile.id, { content: 'Cooked pizza for dinner' });
    await t.drain();
    const ids = await ask('words-user', 'Who did I have sushi with?');
    expect(ids[0]).toBe(sushi.id);
  });

  it('answers by words alone when the embeddings endpoint fails or is late', async () => {
    const { puppy } = await petProfile('failing-user');
    t.upstream.reset();
    t.upstream.scriptFor('/v1/embeddings', { kind: 'error', status: 500 });
    const afterError = await ask('failing-user', 'What kind of pet do I have?');
    expect(afterError).toHaveLength(3);
    expect(afterError).not.toContain(puppy.id);

    t.upstream.scriptFor('/v1/embeddings', { kind: 'hang' });
    const started = Date.now();
    const afterHang = await ask('failing-user', 'What kind of pet do I have?');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(afterHang).toEqual(afterError);
    expect(embeddingCalls(t.upstream)).toHaveLength(2);
  });

  it('records a memory the provider refuses, embeds the rest of its batch, and does not ask again', async () => {
    const profile = await makeProfile(t, 'refused-user');
    // While the endpoint is down the memories wait; the sweep then sends them as one batch, which the
    // provider refuses for its one bad input: the halves are tried until that input is isolated.
    t.upstream.scriptFor(
      '/v1/embeddings',
      ...Array.from({ length: 4 }, () => ({ kind: 'error' as const, status: 503 })),
    );
    const contents = ['A fine memory about a cat', `${REFUSED} memory`, 'Drives to work', 'Eats sushi'];
    const memories: Array<{ id: string }> = [];
    for (const content of contents) memories.push(await makeMemory(t, profile.id, { content }));
    await t.drain();
    await waitFor(async () => (await storedEmbeddings(profile.id)).length === 4);
    const rows: Array<{ memory_id: string; embedding: number[] | null; error: string | null }> =
      await t.dataSource.query(
        `SELECT memory_id, embedding, error FROM memory_embeddings WHERE profile_id = $1`,
        [profile.id],
      );
    const refused = rows.find((row) => row.memory_id === memories[1].id)!;
    expect(refused.embedding).toBeNull();
    expect(refused.error).toContain('input rejected');
    expect(rows.filter((row) => row.embedding?.length === 8)).toHaveLength(3);
    const batches = embeddingCalls(t.upstream)
      .slice(4)
      .map((call) => (call.body.input as string[]).length);
    expect(batches[0]).toBe(4); // one batch, then its halves
    const callsBefore = embeddingCalls(t.upstream).length;
    await makeMemory(t, profile.id, { content: 'A new memory about a kitten' });
    await t.drain();
    const inputs = embeddingCalls(t.upstream)
      .slice(callsBefore)
      .flatMap((call) => call.body.input as string[]);
    expect(inputs).toEqual(['A new memory about a kitten']);
  });

  it('embeds what it missed while the endpoint was down on a later sweep', async () => {
    const profile = await makeProfile(t, 'retry-user');
    t.upstream.scriptFor('/v1/embeddings', { kind: 'error', status: 503 });
    const memory = await makeMemory(t, profile.id, { content: 'Drives a red Tesla' });
    await t.drain();
    expect(await storedEmbeddings(profile.id)).toHaveLength(0);
    await waitFor(async () => (await storedEmbeddings(profile.id)).length > 0);
    expect((await storedEmbeddings(profile.id)).map((row) => row.memory_id)).toEqual([memory.id]);
  });

  it('ignores stored embeddings of another size or model instead of failing the chat', async () => {
    const { profile, puppy } = await petProfile('mixed-user');
    {
      // Ten of the museum visits get a vector of another size, one another model's; one stays as it was.
      await t.dataSource.query(
        `UPDATE memory_embeddings e SET embedding = ARRAY[1, 0, 0]::real[]
         FROM (SELECT id FROM memories WHERE profile_id = $2 AND id <> $1 ORDER BY id LIMIT 10) AS other
         WHERE e.memory_id = other.id`,
        [puppy.id, profile.id],
      );
      await t.dataSource.query(
        `UPDATE memory_embeddings SET model = 'older-model'
         WHERE memory_id = (SELECT id FROM memories WHERE profile_id = $2 AND id <> $1 ORDER BY id OFFSET 10 LIMIT 1)`,
        [puppy.id, profile.id],
      );
    }
    const ids = await ask('mixed-user', 'What kind of pet do I have?');
    expect(ids).toHaveLength(3);
    expect(ids[0]).toBe(puppy.id);
  });

  /**
   * Stores `count` memories of a profile with their embeddings, as the indexer would: each points in a
   * pseudo-random direction mixed with its topic's (like real texts, which spread over the space rather
   * than sitting on a few points).
   */
  async function bulkMemories(profileId: string, count: number, content: string, topic: string) {
    const direction = `{${topicEmbedding(topic, 8)!.join(',')}}`;
    // one transaction: the service's embedding sweep never sees these memories without their vectors
    await t.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO memories (profile_id, content, content_hash, type, importance)
       SELECT $1::uuid, $2 || ' ' || g, md5($1::text || $2 || g), 'fact', 0.9 FROM generate_series(1, $3::int) g`,
        [profileId, content, count],
      );
      await manager.query(
        `INSERT INTO memory_embeddings (memory_id, profile_id, model, embedding)
       SELECT m.id, m.profile_id, 'topic-embedding',
              (SELECT array_agg(3 * b.v + sin(hashtext(m.id::text) * b.i) ORDER BY b.i)
               FROM unnest($2::real[]) WITH ORDINALITY AS b (v, i))::real[]
       FROM memories m
       WHERE m.profile_id = $1 AND starts_with(m.content, $3)
       ON CONFLICT (memory_id) DO UPDATE SET model = EXCLUDED.model, embedding = EXCLUDED.embedding,
         error = NULL, claimed_until = NULL`,
        [profileId, direction, content],
      );
    });
    await t.dataSource.query('ANALYZE memory_embeddings');
  }

  it("builds the vector index of the model's size where pgvector is installed", async () => {
    await petProfile('index-user');
    const index = async (): Promise<Array<{ valid: boolean }>> =>
      t.dataSource.query(
        `SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
         WHERE c.relname = 'memory_embeddings_hnsw_8'`,
      );
    if (await pgvectorInstalled(t)) {
      await waitFor(async () => (await index()).length > 0);
      expect(await index()).toEqual([{ valid: true }]);
    } else {
      expect(await index()).toEqual([]);
    }
  });

  it("finds a large profile's nearest memories (the vector index where pgvector is installed)", async () => {
    // 2,500 memories about something else (food), more than an exact scan is used for, and 30 about
    // walking the dog: the index is approximate, so what is asked of it is the region, not one point.
    // Memories about nothing in particular would be pure noise, some of it near the pets' direction,
    // where the approximate index can return one of them among the dog's (seen once, under load).
    const profile = await makeProfile(t, 'large-user');
    await bulkMemories(profile.id, 2_500, 'Had dinner somewhere, day', 'food');
    await bulkMemories(profile.id, 30, 'Walked the dog in the park, walk', 'dog');
    await t.drain();
    const ids = await ask('large-user', 'What kind of pet do I have?');
    expect(ids).toHaveLength(3);
    const injected: Array<{ content: string }> = await t.dataSource.query(
      `SELECT content FROM memories WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    expect(injected.map((memory) => memory.content.replace(/ \d+$/, ''))).toEqual(
      Array(3).fill('Walked the dog in the park, walk'),
    );
  });

  it("removes a profile's embeddings with the profile and a memory's with the memory", async () => {
    const { profile, puppy } = await petProfile('erased-user');
    await t.admin().delete(`/api/profiles/${profile.id}/memories/${puppy.id}`).expect(200);
    expect((await storedEmbeddings(profile.id)).map((row) => row.memory_id)).not.toContain(puppy.id);
    await t.admin().delete(`/api/profiles/${profile.id}`).expect(200);
    expect(await storedEmbeddings(profile.id)).toHaveLength(0);
  });
});
