import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { errorMessage } from '../common/error-message';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { indexedVectorType } from '../memories/memory-candidates';
import { SemanticSearch } from './semantic-search';

/** Session advisory lock key of index builds (an arbitrary constant; see migrate.ts for another). */
const VECTOR_INDEX_LOCK_KEY = 72_413_650;

/** The name of the HNSW index of embeddings of this size. */
export function vectorIndexName(dimensions: number): string {
  return `memory_embeddings_hnsw_${Math.trunc(dimensions)}`;
}

/** The statement that builds the HNSW index of embeddings of this size (CONCURRENTLY on a server). */
export function createVectorIndexSql(dimensions: number, concurrently: boolean): string {
  const size = Math.trunc(dimensions);
  const type = indexedVectorType(size);
  if (!type) throw new Error(`no vector index holds ${size} dimensions`);
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${vectorIndexName(size)}
    ON memory_embeddings USING hnsw ((embedding::${type}(${size})) ${type}_cosine_ops)
    WHERE cardinality(embedding) = ${size}`;
}

/**
 * The HNSW index of embeddings of one size, with pgvector: an index needs a fixed size, and the size
 * is the configured model's, known once the first vectors come back, so it cannot come from a
 * migration. It is a partial expression index (`embedding::vector(n)` where `cardinality(embedding) =
 * n`; `halfvec` above 2,000 dimensions, none above 4,000), built once per size in the background (at
 * boot for the stored embeddings' size, and when vectors of a size are stored): on a server with
 * CREATE INDEX CONCURRENTLY (writes go on) by the one replica that holds the build lock (the others go
 * on without waiting), replacing an invalid index left by a build that died; on the embedded database
 * with a plain CREATE INDEX. The context statement uses it for profiles of EXACT_NEAREST_LIMIT
 * embeddings or more, and scans smaller ones exactly.
 */
@Injectable()
export class VectorIndex {
  private readonly logger = new Logger('VectorIndex');
  /** Sizes whose build this process has started (and not failed). */
  private readonly ensured = new Set<number>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly semantic: SemanticSearch,
    private readonly background: BackgroundWork,
  ) {}

  /** Starts the build of the index of this size, once per process; never waits for it. */
  ensureFor(dimensions: number): void {
    if (!this.usesPgvector || !indexedVectorType(dimensions) || this.ensured.has(dimensions)) return;
    this.ensured.add(dimensions);
    this.background.run(`vector index of ${dimensions} dimensions`, async () => {
      try {
        await this.build(dimensions);
      } catch (error) {
        this.logger.warn(`could not build ${vectorIndexName(dimensions)}: ${errorMessage(error)}`);
        this.ensured.delete(dimensions);
      }
    });
  }

  /** At boot: the index of the size of the stored embeddings of the configured model. */
  async ensureForStored(model: string): Promise<void> {
    if (!this.usesPgvector) return;
    const [stored] = await this.dataSource.query<Array<{ size: number }>>(
      `SELECT cardinality(embedding) AS size FROM memory_embeddings
       WHERE model = $1 AND embedding IS NOT NULL LIMIT 1`,
      [model],
    );
    if (stored) this.ensureFor(Number(stored.size));
  }

  private get usesPgvector(): boolean {
    const status = this.semantic.status;
    return status.enabled && status.engine === 'pgvector';
  }

  private async build(dimensions: number): Promise<void> {
    const name = vectorIndexName(dimensions);
    const size = Math.trunc(dimensions);
    const onServer = Boolean(this.config.databaseUrl);
    const concurrently = onServer ? 'CONCURRENTLY ' : '';
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      if (onServer) {
        const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
          VECTOR_INDEX_LOCK_KEY,
        ])) as Array<{ locked: boolean }>;
        if (!locked) return;
      }
      try {
        const existing = (await runner.query(
          `SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
           WHERE c.relname = $1 AND c.relkind = 'i'`,
          [name],
        )) as Array<{ valid: boolean }>;
        if (existing[0]?.valid) return;
        if (existing.length > 0) await runner.query(`DROP INDEX ${concurrently}IF EXISTS ${name}`);
        const started = Date.now();
        this.logger.log(`building ${name} (HNSW, cosine) for profiles with many memories`);
        await runner.query(createVectorIndexSql(size, onServer));
        this.logger.log(`built ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      } finally {
        if (onServer) await runner.query('SELECT pg_advisory_unlock($1)', [VECTOR_INDEX_LOCK_KEY]);
      }
    } finally {
      await runner.release();
    }
  }
}
