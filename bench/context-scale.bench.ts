import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import {
  contextStatement,
  heldProfileStatement,
  HeldProfileStatementRow,
} from '../src/context/context-statement';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { embeddedPgOptions } from '../src/database/embedded-pg-connection';
import { DEFAULT_APPLICATION_ID } from '../src/database/migrations/1766000000000-applications-keys-audit';
import { HOT_STATEMENT_OPTIONS, NamedStatement } from '../src/database/prepared-statements';
import { VectorEngine } from '../src/embeddings/semantic-search';
import { createVectorIndexSql, vectorIndexName } from '../src/embeddings/vector-index';
import { HeldMemoryCandidates } from '../src/memories/held-memory-candidates';
import { CANDIDATES_PER_SOURCE, WORD_SCAN_LIMIT } from '../src/memories/memory-candidates';
import { pseudoRandomEmbeddings } from './fake-upstream';
import { LoadResult, percentile, round, runLoad } from './load';
import { ServiceProcess } from './service-process';

export const PROFILE_SIZES = [100, 1_000, 10_000, 100_000];
/**
 * Profiles measured with semantic ranking too (their memories get embeddings of this size): every size
 * with pgvector (the HNSW index serves the large ones); without it, the cosine in plain SQL reads every
 * vector of the profile, so 100,000 is left out (seconds per question).
 */
const SEMANTIC_SIZES = { pgvector: PROFILE_SIZES, sql: [100, 1_000, 10_000] };
/** A small embeddings model's size (1,536 takes four times longer to fill and index here). */
export const BENCH_EMBEDDING_DIMENSIONS = 384;
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

/** The context statement alone, as the service runs it (prepared, generic plan on the server). */
export interface StatementTiming {
  memories: number;
  /** How memories are compared by meaning, or null for words alone. */
  semantic: VectorEngine | null;
  statements: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Whether the plan walks the HNSW index (pgvector, profiles of EXACT_NEAREST_LIMIT or more). */
  usesVectorIndex?: boolean;
  /**
   * A profile held whole (under WORD_SCAN_LIMIT memories), as the service builds its context: the
   * held statement confirming the fingerprint and splitting the question, then the ranking in Node.
   */
  held?: boolean;
}

export interface ContextScaleReport {
  statements: StatementTiming[];
  requests: ContextScaleRow[];
}

/**
 * Context build cost as a profile grows: profiles of 100 to 100,000 memories (bulk inserted with SQL:
 * six words each from a 5,000-word pseudo-vocabulary, skewed so that some words are common,
 * deterministic, with pseudo-random embeddings). First the context statement alone, timed from a
 * client as the service runs it (p50/p95/p99), words only and with semantic ranking; then chat
 * requests through the proxy one at a time (skipExtraction), asking about two words each, with the
 * service's resident memory before and after. `serviceEnv` is the target's environment; the embedded
 * database is filled and timed while the service is stopped (PGlite is one process's).
 */
export async function benchContextScale(
  serviceEnv: Record<string, string | undefined>,
  scale: number,
): Promise<ContextScaleReport> {
  const databaseUrl = serviceEnv.DATABASE_URL;
  // Let the service create the schema first.
  await (await ServiceProcess.start(serviceEnv)).stop();
  const database = await BenchDatabase.open(databaseUrl, serviceEnv.DATA_DIR);
  let statements: StatementTiming[];
  let engine: VectorEngine;
  try {
    engine = (await database.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).length
      ? 'pgvector'
      : 'sql';
    await fill(database, SEMANTIC_SIZES[engine], engine);
    const count = Math.max(50, Math.round(200 * scale));
    statements = await timeStatements(database, PROFILE_SIZES, null, count);
    statements.push(
      ...(await timeHeldProfiles(
        database,
        PROFILE_SIZES.filter((size) => size < WORD_SCAN_LIMIT),
        count,
      )),
    );
    statements.push(
      ...(await timeStatements(database, SEMANTIC_SIZES[engine], engine, Math.round(count / 2))),
    );
  } finally {
    await database.close();
  }

  const requests = Math.max(50, Math.round(200 * scale));
  const rows = await measure(serviceEnv, PROFILE_SIZES, requests, false);
  const semanticEnv = { ...serviceEnv, EMBEDDINGS_MODEL: BENCH_EMBEDDINGS_MODEL };
  rows.push(...(await measure(semanticEnv, SEMANTIC_SIZES[engine], Math.round(requests / 2), true)));
  return { statements, requests: rows };
}

/** The two words of the i-th question: spread over the vocabulary, common and rare alike. */
function questionOf(i: number): string {
  return `Which w${(i * 37) % VOCABULARY} or w${(i * 91) % VOCABULARY} do I like?`;
}

async function timeStatements(
  database: BenchDatabase,
  sizes: number[],
  semantic: VectorEngine | null,
  count: number,
): Promise<StatementTiming[]> {
  const embeddings = pseudoRandomEmbeddings(BENCH_EMBEDDING_DIMENSIONS);
  const statementOf = (size: number, i: number) => {
    const question = questionOf(i);
    const vector = semantic ? embeddings.embed(question) : null;
    return contextStatement(
      { applicationId: DEFAULT_APPLICATION_ID, externalId: `bench-scale-${size}` },
      question,
      CANDIDATES_PER_SOURCE,
      vector && {
        model: BENCH_EMBEDDINGS_MODEL,
        engine: semantic!,
        dimensions: vector.length,
        literal: semantic === 'pgvector' ? `[${vector.join(',')}]` : `{${vector.join(',')}}`,
      },
    );
  };
  const timings: StatementTiming[] = [];
  for (const size of sizes) {
    for (let i = 0; i < 10; i++) await database.run(statementOf(size, 100_000 + i)); // warm-up
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const statement = statementOf(size, i);
      const started = process.hrtime.bigint();
      await database.run(statement);
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    latencies.sort((a, b) => a - b);
    const timing: StatementTiming = {
      memories: size,
      semantic,
      statements: count,
      p50Ms: round(percentile(latencies, 0.5)),
      p95Ms: round(percentile(latencies, 0.95)),
      p99Ms: round(percentile(latencies, 0.99)),
    };
    if (semantic === 'pgvector') {
      const plan = await database.query(
        `EXPLAIN (ANALYZE, COSTS OFF) ${statementOf(size, 0).text}`,
        statementOf(size, 0).values,
      );
      // the index branch is in every plan; it counts when it ran
      timing.usesVectorIndex = plan
        .map((row) => Object.values(row as Record<string, string>)[0])
        .some(
          (line) =>
            line.includes(vectorIndexName(BENCH_EMBEDDING_DIMENSIONS)) && !line.includes('never executed'),
        );
    }
    timings.push(timing);
  }
  return timings;
}

/** Small profiles held whole: the held statement (fingerprint unchanged) and the ranking in Node. */
async function timeHeldProfiles(
  database: BenchDatabase,
  sizes: number[],
  count: number,
): Promise<StatementTiming[]> {
  const timings: StatementTiming[] = [];
  for (const size of sizes) {
    const profile = { applicationId: DEFAULT_APPLICATION_ID, externalId: `bench-scale-${size}` };
    const [whole] = await database.rows<HeldProfileStatementRow>(heldProfileStatement(profile, '', null));
    const held = HeldMemoryCandidates.from(whole.memories!)!;
    const build = async (i: number) => {
      const [row] = await database.rows<HeldProfileStatementRow>(
        heldProfileStatement(profile, questionOf(i), {
          fingerprint: whole.fingerprint!,
          memoryVersions: held.versionList,
          serverStarted: whole.server_started!,
        }),
      );
      if (row.memories !== null) throw new Error('the held profile changed during the benchmark');
      held.candidates(row.units, CANDIDATES_PER_SOURCE);
    };
    for (let i = 0; i < 10; i++) await build(100_000 + i); // warm-up
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      await build(i);
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    latencies.sort((a, b) => a - b);
    timings.push({
      memories: size,
      semantic: null,
      held: true,
      statements: count,
      p50Ms: round(percentile(latencies, 0.5)),
      p95Ms: round(percentile(latencies, 0.95)),
      p99Ms: round(percentile(latencies, 0.99)),
    });
  }
  return timings;
}

/**
 * The benchmark's own connection: a client like the service's hot statements', or a client of the
 * embedded database (the service stopped).
 */
class BenchDatabase {
  private constructor(
    private readonly client: Client,
    private readonly embedded: EmbeddedDatabase | null,
  ) {}

  static async open(databaseUrl: string | undefined, dataDir: string | undefined): Promise<BenchDatabase> {
    const embedded = databaseUrl ? null : await EmbeddedDatabase.open(dataDir!);
    const client = new Client(
      embedded
        ? embeddedPgOptions(embedded.thread)
        : { connectionString: databaseUrl, options: HOT_STATEMENT_OPTIONS },
    );
    await client.connect();
    return new BenchDatabase(client, embedded);
  }

  async query(text: string, values: unknown[] = []): Promise<unknown[]> {
    return (await this.client.query(text, values)).rows as unknown[];
  }

  /** A named statement's rows (prepared once per name). */
  async rows<T>(statement: NamedStatement): Promise<T[]> {
    return (await this.client.query(statement)).rows as T[];
  }

  /** A named statement: prepared once per name, as the service's are. */
  async run(statement: NamedStatement): Promise<void> {
    await this.client.query(statement);
  }

  async exec(sql: string): Promise<void> {
    await this.client.query(sql);
  }

  async close(): Promise<void> {
    await this.client.end();
    await this.embedded?.close();
  }
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
                  content: questionOf(i),
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

async function fill(database: BenchDatabase, semanticSizes: number[], engine: VectorEngine): Promise<void> {
  const statements = PROFILE_SIZES.flatMap((size) => [
    `INSERT INTO profiles (external_id) VALUES ('bench-scale-${size}') ON CONFLICT (application_id, external_id) DO NOTHING`,
    `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
     SELECT p.id,
            'Likes ' || ${[1, 2, 3, 4, 5, 6].map((k) => pseudoWord(k)).join(" || ' ' || ")} || ' (' || g || ')',
            md5(p.id::text || g), 'fact', (g % 10) / 10.0, now() - (g % 1000) * interval '1 hour'
     FROM profiles p, generate_series(1, ${size}) g
     WHERE p.external_id = 'bench-scale-${size}'
     ON CONFLICT (profile_id, content_hash) DO NOTHING`,
  ]);
  // Pseudo-random vectors for the measured profiles. Every other memory in the database (earlier
  // suites' too) gets a one-number stand-in, never compared (its size differs), so that the service's
  // indexer finds nothing to embed while the requests are timed.
  statements.push(`INSERT INTO memory_embeddings (memory_id, profile_id, model, embedding)
    SELECT m.id, m.profile_id, '${BENCH_EMBEDDINGS_MODEL}',
           CASE WHEN p.external_id IN (${semanticSizes.map((size) => `'bench-scale-${size}'`).join(', ')})
                THEN ARRAY(SELECT sin(hashtext(m.id::text) + d * 0.7) FROM generate_series(1, ${BENCH_EMBEDDING_DIMENSIONS}) d)::real[]
                ELSE ARRAY[1]::real[] END
    FROM memories m JOIN profiles p ON p.id = m.profile_id
    ON CONFLICT (memory_id) DO UPDATE SET model = EXCLUDED.model, embedding = EXCLUDED.embedding`);
  // The index the service builds once it sees vectors of this size (built here so that it is there
  // before anything is timed).
  if (engine === 'pgvector') statements.push(createVectorIndexSql(BENCH_EMBEDDING_DIMENSIONS, false));
  // The decay is counted up to now, as the daily job would have done: at boot it would otherwise rewrite
  // every backdated row, and the dead rows and GIN pending entries it leaves slow the first minutes of
  // searches (measured apart; see the README).
  statements.push(`UPDATE memories SET decay_counted_until = now() WHERE decay_counted_until IS NULL`);
  statements.push('VACUUM ANALYZE memories');
  statements.push('VACUUM ANALYZE memory_embeddings');
  for (const sql of statements) await database.exec(sql);
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
