import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { errorMessage } from '../common/error-message';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { JobLeases } from '../database/job-leases';
import { MEMORIES_STORED, MemoriesStoredEvent } from '../memories/memory-events';
import { EmbeddingsClient } from './embeddings-client';
import { SemanticSearch } from './semantic-search';
import { VectorIndex } from './vector-index';

/** Memories embedded per call of the endpoint. */
export const EMBEDDING_BATCH_SIZE = 64;
/** How long a claimed memory stays this process's to embed: longer than a call with its retries. */
const CLAIM_MS = 5 * 60_000;
const SWEEP_LEASE_MS = 60_000;

interface PendingMemory {
  id: string;
  content: string;
  /** The hash of `content`: the vector is stored only while the memory still has this content. */
  content_hash: string;
}

/** A memory's outcome: its vector, or why the provider would not embed it. */
type Embedded = { id: string; content_hash: string } & (
  { embedding: number[]; error: null } | { embedding: null; error: string }
);

/**
 * Embeds memories in the background when semantic ranking is on. New memories are embedded as they are
 * announced; at boot (and after a failed call, on the sweep interval) the memories without an embedding
 * by the configured model are found and embedded, so turning the feature on or changing the model covers
 * the memories already stored. The sweep walks the memories once, in creation order, and only one
 * replica sweeps at a time (a job lease); a memory is claimed before it is embedded (its embedding row,
 * without a vector yet, with a lease), so two replicas never embed one memory twice. A memory the
 * provider refuses is recorded with the error and not asked for again; other failures leave the
 * memories to the next sweep. Ranking never waits for this: a memory without an embedding is still
 * found by its words.
 */
@Injectable()
export class EmbeddingIndexer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EmbeddingIndexer');
  private readonly queued = new Set<string>();
  private sweepWanted = false;
  private running = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly stopping = new AbortController();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly semantic: SemanticSearch,
    private readonly background: BackgroundWork,
    private readonly leases: JobLeases,
    private readonly vectorIndex: VectorIndex,
    @Optional() @Inject(EmbeddingsClient) private readonly client: EmbeddingsClient | null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.semantic.detect();
    if (this.client) await this.vectorIndex.ensureForStored(this.client.model);
    this.sweepWanted = true;
    this.kick();
  }

  /** Before BackgroundWork drains: the call in flight is aborted; what is left waits for the next boot. */
  beforeApplicationShutdown(): void {
    this.stopping.abort();
    clearTimeout(this.retryTimer);
  }

  @OnEvent(MEMORIES_STORED)
  onMemoriesStored(event: MemoriesStoredEvent): void {
    for (const id of event.memoryIds) this.queued.add(id);
    this.kick();
  }

  private kick(): void {
    if (!this.semantic.enabled || this.running || this.stopping.signal.aborted) return;
    if (this.queued.size === 0 && !this.sweepWanted) return;
    this.running = true;
    this.background.run('embedding memories', () => this.work());
  }

  private async work(): Promise<void> {
    try {
      while (this.queued.size > 0 && !this.stopping.signal.aborted) {
        const ids = [...this.queued].slice(0, EMBEDDING_BATCH_SIZE);
        for (const id of ids) this.queued.delete(id);
        if (!(await this.embed(await this.claim(ids)))) return this.pause();
      }
      if (this.sweepWanted && !this.stopping.signal.aborted) {
        this.sweepWanted = false;
        let failed = false;
        await this.leases.runExclusive('embedding-sweep', SWEEP_LEASE_MS, async (lost) => {
          failed = !(await this.sweep(lost));
        });
        if (failed) return this.pause();
      }
    } catch (error) {
      this.logger.warn(`embedding memories failed, retrying later: ${errorMessage(error)}`);
      this.pause();
    } finally {
      this.running = false;
      if (this.queued.size > 0) this.kick();
    }
  }

  /** Stops until the next sweep, which finds whatever was queued. */
  private pause(): void {
    this.queued.clear();
    this.sweepWanted = false;
    const interval = this.config.extraction.sweepIntervalMs;
    if (interval <= 0 || this.retryTimer || this.stopping.signal.aborted) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.sweepWanted = true;
      this.kick();
    }, interval);
    this.retryTimer.unref();
  }

  /**
   * Goes once through every memory without an embedding by the configured model, in creation order,
   * from where the last batch ended. False when the endpoint failed and the sweep should wait.
   */
  private async sweep(lost: AbortSignal): Promise<boolean> {
    let after: { createdAt: Date; id: string } | null = null;
    while (!this.stopping.signal.aborted && !lost.aborted) {
      const rows: Array<{ id: string; created_at: Date }> = await this.dataSource.query(
        `SELECT m.id, m.created_at FROM memories m
         WHERE ($2::timestamptz IS NULL OR (m.created_at, m.id) > ($2::timestamptz, $3::uuid))
           AND NOT EXISTS (SELECT 1 FROM memory_embeddings e
                           WHERE e.memory_id = m.id AND e.model = $1
                             AND (e.embedding IS NOT NULL OR e.error IS NOT NULL OR e.claimed_until >= now()))
         ORDER BY m.created_at, m.id LIMIT $4`,
        [this.client!.model, after?.createdAt ?? null, after?.id ?? null, EMBEDDING_BATCH_SIZE],
      );
      if (rows.length === 0) return true;
      const last = rows[rows.length - 1];
      after = { createdAt: last.created_at, id: last.id };
      if (!(await this.embed(await this.claim(rows.map((row) => row.id))))) return false;
    }
    return true;
  }

  /**
   * Claims the memories that have no embedding by the configured model and that no other process is
   * embedding, and returns their contents: only these are embedded here.
   */
  private claim(ids: string[]): Promise<PendingMemory[]> {
    return this.dataSource.query(
      `WITH claimed AS (
         INSERT INTO memory_embeddings (memory_id, profile_id, model, claimed_until)
         SELECT m.id, m.profile_id, $2, now() + make_interval(secs => $3::float8 / 1000)
         FROM memories m WHERE m.id = ANY($1::uuid[])
         ON CONFLICT (memory_id) DO UPDATE
           SET model = EXCLUDED.model, embedding = NULL, error = NULL, claimed_until = EXCLUDED.claimed_until
           WHERE memory_embeddings.model <> EXCLUDED.model
              OR (memory_embeddings.embedding IS NULL AND memory_embeddings.error IS NULL
                  AND (memory_embeddings.claimed_until IS NULL OR memory_embeddings.claimed_until < now()))
         RETURNING memory_id
       )
       SELECT m.id, m.content, m.content_hash FROM memories m JOIN claimed c ON c.memory_id = m.id`,
      [ids, this.client!.model, CLAIM_MS],
    );
  }

  /** Embeds and stores a batch; false when the endpoint failed (not refused) and the work should pause. */
  private async embed(batch: PendingMemory[]): Promise<boolean> {
    if (batch.length === 0) return true;
    const embedded = await this.embedOrIsolate(batch);
    if (embedded === null) {
      await this.unclaim(batch);
      return false;
    }
    await this.store(embedded);
    return true;
  }

  /**
   * The batch's vectors. When the provider refuses the batch, its halves are tried, down to the one
   * memory it refuses, which is recorded with the reason.
   */
  private async embedOrIsolate(batch: PendingMemory[]): Promise<Embedded[] | null> {
    const outcome = await this.client!.embed(
      batch.map((memory) => memory.content),
      this.stopping.signal,
    );
    if (outcome.kind === 'vectors')
      return batch.map((memory, index) => ({
        id: memory.id,
        content_hash: memory.content_hash,
        embedding: outcome.vectors[index],
        error: null,
      }));
    if (outcome.kind === 'failed') {
      if (!this.stopping.signal.aborted)
        this.logger.warn(`embedding ${batch.length} memories failed, retrying later: ${outcome.reason}`);
      return null;
    }
    if (batch.length === 1) {
      this.logger.warn(`the embeddings endpoint refused memory ${batch[0].id}: ${outcome.detail}`);
      return [
        { id: batch[0].id, content_hash: batch[0].content_hash, embedding: null, error: outcome.detail },
      ];
    }
    const middle = Math.ceil(batch.length / 2);
    const first = await this.embedOrIsolate(batch.slice(0, middle));
    const second = first && (await this.embedOrIsolate(batch.slice(middle)));
    return first && second ? [...first, ...second] : null;
  }

  /** Gives up the claims of a batch that could not be embedded now, so that a later sweep finds it. */
  private async unclaim(batch: PendingMemory[]): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM memory_embeddings
       WHERE memory_id = ANY($1::uuid[]) AND model = $2 AND embedding IS NULL AND error IS NULL`,
      [batch.map((memory) => memory.id), this.client!.model],
    );
  }

  private async store(embedded: Embedded[]): Promise<void> {
    // The claimed rows get their vectors; memories deleted meanwhile took their rows with them, and a
    // memory edited meanwhile (its row dropped by the edit, perhaps claimed again) gets none of its old content.
    await this.dataSource.query(
      `UPDATE memory_embeddings m
       SET embedding = e.embedding, error = e.error, claimed_until = NULL, created_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS e (id uuid, content_hash text, embedding real[], error text)
       WHERE m.memory_id = e.id AND m.model = $1
         AND EXISTS (SELECT 1 FROM memories c WHERE c.id = e.id AND c.content_hash = e.content_hash)`,
      [this.client!.model, JSON.stringify(embedded)],
    );
    const sizes = new Set(embedded.flatMap((memory) => (memory.embedding ? [memory.embedding.length] : [])));
    for (const size of sizes) this.vectorIndex.ensureFor(size);
  }
}
