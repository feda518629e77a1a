import { EMBEDDING_BATCH_SIZE, EmbeddingIndexer } from '../src/embeddings/embedding-indexer';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';
import { startTestApp, TestApp } from './support/test-app';

const EMBEDDED = 100;
const MISSING = 150;

/**
 * The embedding sweep walks the memories once, in creation order: each read starts where the last one
 * ended, so a table of mostly embedded memories is not read again from its start for every batch.
 */
describe('The embedding sweep', () => {
  let fake: FakeOpenAI;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ embeddingDimensions: 8 });
    t = await startTestApp({
      EMBEDDINGS_MODEL: 'fake-embedding',
      EMBEDDINGS_BASE_URL: fake.url,
      EMBEDDINGS_API_KEY: 'sk-embed',
      EXTRACTION_SWEEP_INTERVAL_MS: '0',
      DATABASE_URL: process.env.DATABASE_URL,
    });
    await t.drain();
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('reads each memory without an embedding once, every read after the last one ended', async () => {
    const [profile] = await t.dataSource.query(
      `INSERT INTO profiles (external_id) VALUES ('embedding-sweep') RETURNING id`,
    );
    const insert = (from: number, count: number, minutesAgo: number): Promise<Array<{ id: string }>> =>
      t.dataSource.query(
        `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
         SELECT $1, 'Memory number ' || n, md5('Memory number ' || n), 'fact', 0.5,
                now() - ($4::int - n) * interval '1 second' - $5::int * interval '1 minute'
         FROM generate_series($2::int, $2::int + $3::int - 1) AS n RETURNING id`,
        [profile.id, from, count, from + count, minutesAgo],
      );
    // the older memories have their embeddings already; the newer ones do not
    const embedded = await insert(1, EMBEDDED, 60);
    await t.dataSource.query(
      `INSERT INTO memory_embeddings (memory_id, profile_id, model, embedding)
       SELECT id, $2, 'fake-embedding', array_fill(0.5::real, ARRAY[8]) FROM unnest($1::uuid[]) AS id`,
      [embedded.map((row) => row.id), profile.id],
    );
    const missing = await insert(EMBEDDED + 1, MISSING, 0);

    const query = t.dataSource.query.bind(t.dataSource);
    const reads: Array<{ after: [unknown, unknown]; ids: string[]; created: Date[] }> = [];
    const spy = jest
      .spyOn(t.dataSource, 'query')
      .mockImplementation(async (text: string, values?: unknown) => {
        const result = await query(text, values as unknown[]);
        if (text.includes('NOT EXISTS (SELECT 1 FROM memory_embeddings')) {
          const params = values as unknown[];
          const rows = result as Array<{ id: string; created_at: Date }>;
          reads.push({
            after: [params[1], params[2]],
            ids: rows.map((row) => row.id),
            created: rows.map((row) => row.created_at),
          });
        }
        return result;
      });
    try {
      fake.reset();
      await t.app.get(EmbeddingIndexer).onApplicationBootstrap();
      await t.drain();
    } finally {
      spy.mockRestore();
    }

    const read = reads.flatMap((batch) => batch.ids);
    expect(read.sort()).toEqual(missing.map((row) => row.id).sort());
    expect(reads).toHaveLength(Math.ceil(MISSING / EMBEDDING_BATCH_SIZE) + 1);
    expect(reads[0].after).toEqual([null, null]);
    for (let i = 1; i < reads.length; i++) {
      const previous = reads[i - 1];
      const last = previous.ids.length - 1;
      expect(reads[i].after).toEqual([previous.created[last], previous.ids[last]]);
    }
    const sent = fake.requests
      .filter((request) => request.path === '/v1/embeddings')
      .flatMap((request) => request.body.input as string[]);
    expect(sent).toHaveLength(MISSING);
  });
});
