import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { LoadResult, runLoad } from './load';
import { ServiceProcess } from './service-process';

export const PROFILE_SIZES = [1_000, 10_000, 100_000];
/** Profiles measured with semantic ranking too (their memories get embeddings of this size). */
const SEMANTIC_SIZES = [1_000, 10_000];
export const BENCH_EMBEDDING_DIMENSIONS = 1536;
const BENCH_EMBEDDINGS_MODEL = 'bench-pseudo-random';
/** Pseudo-words w0..w4999; memories draw them skewed towards the low numbers, as real text favours some words. */
const VOCABULARY = 5000;

export interface ContextScaleRow extends LoadResult {
  memories: number;
  /** With semantic ranking: the question embedded by the bench upstream, nearest memories by cosine. */
  semantic?: boolean;
  /** Resident memory of the service after the run, and its growth during it. */
  rssMiB: number;
  rssGrowthMiB: number;
}

/**
 * Context build latency as a profile grows: profiles of 1,000, 10,000 and 100,000 memories (bulk
 * inserted with SQL: six words each from a 5,000-word pseudo-vocabulary, skewed so that some words are
 * common, deterministic), then chat requests through the proxy one at a time (skipExtraction), asking
 * about two words each, with the service's resident memory before and after. `serviceEnv` is the
 * target's environment; the embedded database is filled while the service is stopped (PGlite is one
 * process's).
 */
export async function benchContextScale(
  serviceEnv: Record<string, string | undefined>,
  scale: number,
  semantic: boolean,
): Promise<ContextScaleRow[]> {
  const databaseUrl = serviceEnv.DATABASE_URL;
  // Let the service create the schema first.
  await (await ServiceProcess.start(serviceEnv)).stop();
  await fill(databaseUrl, serviceEnv.DATA_DIR, semantic);

  const requests = Math.max(50, Math.round(200 * scale));
  const rows = await measure(serviceEnv, PROFILE_SIZES, requests, false);
  if (semantic) {
    const semanticEnv = { ...serviceEnv, EMBEDDINGS_MODEL: BENCH_EMBEDDINGS_MODEL };
    rows.push(...(await measure(semanticEnv, SEMANTIC_SIZES, requests, true)));
  }
  return rows;
}

async function measure(
  serviceEnv: Record<string, string | undefined>,
  sizes: number[],
  requests: number,
  semantic: boolean,
): Promise<ContextScaleRow[]> {
  const service = await ServiceProcess.start(serviceEnv);
  const rows: ContextScaleRow[] = [];
  try {
    for (const size of sizes) {
      const before = residentMiB(service.pid);
      const result = await runLoad(
        service.url,
        `context at ${size} memories${semantic ? ', semantic' : ''}`,
        {
          requests,
          concurrency: 1,
          next: (i) => ({
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { 'x-service-id': `bench-scale-${size}` },
            body: {
              model: 'bench-model',
              messages: [
                {
                  role: 'user',
                  content: `Which w${(i * 37) % VOCABULARY} or w${(i * 91) % VOCABULARY} do I like?`,
                },
              ],
              service: { skipExtraction: true },
            },
          }),
        },
      );
      const after = residentMiB(service.pid);
      rows.push({
        ...result,
        memories: size,
        semantic,
        rssMiB: after,
        rssGrowthMiB: Math.round((after - before) * 10) / 10,
      });
    }
  } finally {
    await service.stop();
  }
  return rows;
}

async function fill(
  databaseUrl: string | undefined,
  dataDir: string | undefined,
  semantic: boolean,
): Promise<void> {
  const statements = PROFILE_SIZES.flatMap((size) => [
    `INSERT INTO profiles (external_id) VALUES ('bench-scale-${size}') ON CONFLICT (external_id) DO NOTHING`,
    `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
     SELECT p.id,
            'Likes ' || ${[1, 2, 3, 4, 5, 6].map((k) => pseudoWord(k)).join(" || ' ' || ")} || ' (' || g || ')',
            md5(p.id::text || g), 'fact', (g % 10) / 10.0, now() - (g % 1000) * interval '1 hour'
     FROM profiles p, generate_series(1, ${size}) g
     WHERE p.external_id = 'bench-scale-${size}'
     ON CONFLICT (profile_id, content_hash) DO NOTHING`,
  ]);
  if (semantic) {
    // Pseudo-random vectors for the measured profiles. Every other memory in the database (earlier
    // suites' too) gets a one-number stand-in, never compared (its size differs), so that the service's
    // indexer finds nothing to embed while the requests are timed.
    statements.push(`INSERT INTO memory_embeddings (memory_id, profile_id, model, embedding)
      SELECT m.id, m.profile_id, '${BENCH_EMBEDDINGS_MODEL}',
             CASE WHEN p.external_id IN (${SEMANTIC_SIZES.map((size) => `'bench-scale-${size}'`).join(', ')})
                  THEN ARRAY(SELECT sin(hashtext(m.id::text) + d * 0.7) FROM generate_series(1, ${BENCH_EMBEDDING_DIMENSIONS}) d)::real[]
                  ELSE ARRAY[1]::real[] END
      FROM memories m JOIN profiles p ON p.id = m.profile_id
      ON CONFLICT (memory_id) DO UPDATE SET model = EXCLUDED.model, embedding = EXCLUDED.embedding`);
  }
  // The decay is counted up to now, as the daily job would have done: at boot it would otherwise rewrite
  // every backdated row, and the dead rows and GIN pending entries it leaves slow the first minutes of
  // searches (measured apart; see the README).
  statements.push(`UPDATE memories SET decay_counted_until = now() WHERE decay_counted_until IS NULL`);
  statements.push('VACUUM ANALYZE memories');
  if (databaseUrl) {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      for (const sql of statements) await client.query(sql);
    } finally {
      await client.end();
    }
    return;
  }
  const embedded = await EmbeddedDatabase.open(dataDir!);
  try {
    for (const sql of statements) await embedded.pglite.exec(sql);
  } finally {
    await embedded.close();
  }
}

/** The k-th word of memory g: w0..w4999, skewed (cube of a uniform draw) towards common low numbers. */
function pseudoWord(k: number): string {
  return `'w' || floor(${VOCABULARY} * power((abs(hashtext(g || ':${k}')) % 1000000) / 1000000.0, 3))::int`;
}

function residentMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kib / 1024) * 10) / 10;
}
