import { Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { errorMessage } from '../common/error-message';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MAX_QUESTION_CHARS } from '../memories/memory-candidates';
import { EmbeddingsClient } from './embeddings-client';

/**
 * How stored embeddings are compared with the question's: pgvector's cosine distance where the
 * extension is installed, else the cosine computed in plain SQL over the stored `real[]` (any server).
 */
export type VectorEngine = 'pgvector' | 'sql';

/** A question embedded for the context query: its text form for the engine and the vector's size. */
export interface QuestionVector {
  model: string;
  engine: VectorEngine;
  literal: string;
  dimensions: number;
}

export type SemanticStatus =
  { enabled: true; model: string; engine: VectorEngine } | { enabled: false; reason: string };

/**
 * Whether memories are ranked by meaning as well as by words, and the question's embedding when they
 * are. It is on when EMBEDDINGS_MODEL is set, on any PostgreSQL: with pgvector when the database has it
 * (looked up once at boot), else with the cosine in plain SQL. Whenever the embeddings endpoint fails or
 * is late, that question is ranked by full text alone.
 */
@Injectable()
export class SemanticSearch implements OnApplicationBootstrap {
  private readonly logger = new Logger('SemanticSearch');
  private detection: Promise<SemanticStatus> | null = null;
  private current: SemanticStatus = { enabled: false, reason: 'not detected yet' };

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(EmbeddingsClient) private readonly client: EmbeddingsClient | null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.detect();
  }

  get status(): SemanticStatus {
    return this.current;
  }

  get enabled(): boolean {
    return this.current.enabled;
  }

  /** Looks the capability up once; later calls get the same answer. */
  detect(): Promise<SemanticStatus> {
    this.detection ??= this.lookUp().then((status) => (this.current = status));
    return this.detection;
  }

  /** The question's embedding, or null (no text, semantic ranking off, or the endpoint failed). */
  async embedQuestion(question: string, signal?: AbortSignal): Promise<QuestionVector | null> {
    const text = question.slice(0, MAX_QUESTION_CHARS).trim();
    if (!this.client || !this.enabled || text === '') return null;
    const outcome = await this.client.embed([text], signal);
    if (signal?.aborted) return null;
    if (outcome.kind !== 'vectors') {
      const reason = outcome.kind === 'rejected' ? outcome.detail : outcome.reason;
      this.logger.warn(`question not embedded, ranking by its words alone: ${reason}`);
      return null;
    }
    const vector = outcome.vectors[0];
    const engine = this.current.enabled ? this.current.engine : 'sql';
    const literal = engine === 'pgvector' ? `[${vector.join(',')}]` : `{${vector.join(',')}}`;
    return { model: this.client.model, engine, literal, dimensions: vector.length };
  }

  private async lookUp(): Promise<SemanticStatus> {
    const model = this.config.embeddings?.model;
    if (!model || !this.client) return { enabled: false, reason: 'EMBEDDINGS_MODEL is not set' };
    let installed: Array<{ extversion: string }>;
    try {
      installed = await this.dataSource.query(`SELECT extversion FROM pg_extension WHERE extname = 'vector'`);
    } catch (error) {
      installed = [];
      this.logger.warn(`could not look for pgvector: ${errorMessage(error)}`);
    }
    if (installed.length === 0) {
      this.logger.log(
        `semantic ranking on: model ${model}, cosine in SQL (pgvector is not installed; it is faster on large profiles)`,
      );
      return { enabled: true, model, engine: 'sql' };
    }
    this.logger.log(`semantic ranking on: model ${model}, pgvector ${installed[0].extversion}`);
    return { enabled: true, model, engine: 'pgvector' };
  }
}
