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
import { MEMORIES_STORED, MemoriesStoredEvent } from '../memories/memory-events';
import { EmbeddingsClient } from './embeddings-client';
import { SemanticSearch } from './semantic-search';

/** Memories embedded per call of the endpoint. */
export const EMBEDDING_BATCH_SIZE = 64;

interface PendingMemory {
  id: string;
  content: string;
}

/** A memory's outcome: its vector, or why the provider would not embed it. */
type Embedded =
  { id: string; embedding: number[]; error: null } | { id: string; embedding: null; error: string };

/**
 * Embeds memories in the background when semantic ranking is on. New memories are embedded as they are
 * announced; at boot (and after a failed call, on the sweep interval) every memory without an embedding
 * by the configured model is found and embedded, so turning the feature on or changing the model covers
 * the memories already stored. A memory the provider refuses is recorded with the error and not asked
 * for again; other failures leave the memories to the next sweep. Ranking never waits for this: a
 * memory without an embedding is still found by its words.
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
    @Optional() @Inject(EmbeddingsClient) private readonly client: EmbeddingsClient | null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.semantic.detect();
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
      while (!this.stopping.signal.aborted) {
        const batch = await this.nextBatch();
        if (batch === null) return;
        if (batch.length > 0 && !(await this.embed(batch))) return this.pause();
      }
    } catch (error) {
      this.logger.warn(`embedding memories failed, retrying later: ${errorMessage(error)}`);
      this.pause();
    } finally {
      this.running = false;
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

  /** Announced memories first, then (when a sweep is due) any without an embedding; null when none. */
  private async nextBatch(): Promise<PendingMemory[] | null> {
    const model = this.client!.model;
    if (this.queued.size > 0) {
      const ids = [...this.queued].slice(0, EMBEDDING_BATCH_SIZE);
      for (const id of ids) this.queued.delete(id);
      return this.dataSource.query(
        `SELECT m.id, m.content FROM memories m
         WHERE m.id = ANY($1::uuid[])
           AND NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id AND e.model = $2)`,
        [ids, model],
      );
    }
    if (!this.sweepWanted) return null;
    const rows: PendingMemory[] = await this.dataSource.query(
      `SELECT m.id, m.content FROM memories m
       WHERE NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id AND e.model = $1)
       ORDER BY m.created_at, m.id LIMIT $2`,
      [model, EMBEDDING_BATCH_SIZE],
    );
    if (rows.length < EMBEDDING_BATCH_SIZE) this.sweepWanted = false;
    return rows.length > 0 ? rows : this.sweepWanted ? [] : null;
  }

  /** Embeds and stores a batch; false when the endpoint failed (not refused) and the work should pause. */
  private async embed(batch: PendingMemory[]): Promise<boolean> {
    const embedded = await this.embedOrIsolate(batch);
    if (embedded === null) return false;
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
      return [{ id: batch[0].id, embedding: null, error: outcome.detail }];
    }
    const middle = Math.ceil(batch.length / 2);
    const first = await this.embedOrIsolate(batch.slice(0, middle));
    const second = first && (await this.embedOrIsolate(batch.slice(middle)));
    return first && second ? [...first, ...second] : null;
  }

  private async store(embedded: Embedded[]): Promise<void> {
    // Memories deleted meanwhile drop out in the join.
    await this.dataSource.query(
      `INSERT INTO memory_embeddings (memory_id, profile_id, model, embedding, error)
         SELECT m.id, m.profile_id, $1, e.embedding, e.error
         FROM jsonb_to_recordset($2::jsonb) AS e (id uuid, embedding real[], error text)
         JOIN memories m ON m.id = e.id
         ON CONFLICT (memory_id) DO UPDATE
           SET model = EXCLUDED.model, embedding = EXCLUDED.embedding, error = EXCLUDED.error, created_at = now()`,
      [this.client!.model, JSON.stringify(embedded)],
    );
  }
}
