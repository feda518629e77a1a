// @database postgres
import { EmbeddingIndexer } from '../src/embeddings/embedding-indexer';
import { MEMORIES_STORED } from '../src/memories/memory-events';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';
import { startTestApp, TestApp } from './support/test-app';

// Two replicas need one PostgreSQL server: `DATABASE_URL=postgres://... npm run test:e2e`.
const MEMORIES = 150;

describe('two app instances embedding one database', () => {
  let fake: FakeOpenAI;
  let apps: TestApp[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI({ embeddingDimensions: 8 });
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await fake.close();
  });

  it('embeds every memory once when one replica is told of them and the other sweeps at the same time', async () => {
    const env = {
      EMBEDDINGS_MODEL: 'fake-embedding',
      EMBEDDINGS_BASE_URL: fake.url,
      EMBEDDINGS_API_KEY: 'sk-embed',
      EXTRACTION_SWEEP_INTERVAL_MS: '0',
    };
    apps = [await startTestApp(env), await startTestApp(env)];
    const [a, b] = apps;
    await Promise.all(apps.map((app) => app.drain()));
    const [profile] = await a.dataSource.query(
      `INSERT INTO profiles (external_id) VALUES ('embedding-instances') RETURNING id`,
    );
    const rows: Array<{ id: string }> = await a.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance)
       SELECT $1, 'Memory number ' || n, md5('Memory number ' || n), 'fact', 0.5
       FROM generate_series(1, $2::int) AS n RETURNING id`,
      [profile.id, MEMORIES],
    );
    fake.reset();
    // a is told of the new memories (as after storing them), b sweeps for unembedded ones
    a.app
      .get(EventEmitter2)
      .emit(MEMORIES_STORED, { profileId: profile.id, memoryIds: rows.map((row) => row.id) });
    await b.app.get(EmbeddingIndexer).onApplicationBootstrap();
    await Promise.all(apps.map((app) => app.drain()));

    const embedded = fake.requests
      .filter((request) => request.path === '/v1/embeddings')
      .flatMap((request) => request.body.input as string[]);
    expect(embedded).toHaveLength(MEMORIES);
    expect(new Set(embedded).size).toBe(MEMORIES);
    const [{ count }] = await a.dataSource.query(
      `SELECT count(*)::int AS count FROM memory_embeddings WHERE embedding IS NOT NULL AND profile_id = $1`,
      [profile.id],
    );
    expect(count).toBe(MEMORIES);
  });
});
