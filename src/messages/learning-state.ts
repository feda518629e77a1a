import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig, effectiveExtractor } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

/** How a profile's conversation is being learnt from, and what went wrong last. */
export interface LearningState {
  /** The extractor that learns: the LLM or the heuristic rules (EXTRACTOR). */
  extractor: 'llm' | 'heuristic';
  /** Whether the rules learn from a batch after the LLM's last failed try (EXTRACTION_RULES_FALLBACK). */
  rulesFallback: boolean;
  /** Messages not yet learnt from (some may be waiting after a failed try). */
  pendingMessages: number;
  /** Messages given up after their last failed try (POST /api/profiles/{id}/extraction/retry). */
  failedMessages: number;
  /** Messages the rules learnt from after the LLM's last failed try. */
  fellBackMessages: number;
  /** The error of the newest failure that still stands (pending, given up, or learnt by the rules). */
  lastError: string | null;
  lastErrorAt: Date | null;
}

interface LearningRow {
  pending: number;
  failed: number;
  fell_back: number;
  last_error: string | null;
  last_error_at: Date | string | null;
}

/**
 * Reads a profile's learning state from its messages (the queue of background extraction): the pending
 * ones from the pending index, those with an error from the error index, so that the cost follows the
 * work outstanding and the failures, not the length of the conversation.
 */
@Injectable()
export class LearningStateReader {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async read(profileId: string): Promise<LearningState> {
    const [row]: LearningRow[] = await this.dataSource.query(
      `SELECT (SELECT count(*) FROM messages WHERE profile_id = $1 AND extracted_at IS NULL)::int AS pending,
              e.failed, e.fell_back, l.extraction_error AS last_error, l.extraction_failed_at AS last_error_at
       FROM (SELECT count(*) FILTER (WHERE extracted_at IS NOT NULL AND NOT extraction_fell_back)::int AS failed,
                    count(*) FILTER (WHERE extraction_fell_back)::int AS fell_back
             FROM messages WHERE profile_id = $1 AND extraction_error IS NOT NULL) e
       LEFT JOIN LATERAL (
         SELECT extraction_error, extraction_failed_at FROM messages
         WHERE profile_id = $1 AND extraction_error IS NOT NULL
         ORDER BY extraction_failed_at DESC NULLS LAST LIMIT 1) l ON true`,
      [profileId],
    );
    return {
      extractor: effectiveExtractor(this.config),
      rulesFallback: this.config.extraction.rulesFallback,
      pendingMessages: row.pending,
      failedMessages: row.failed,
      fellBackMessages: row.fell_back,
      lastError: row.last_error,
      lastErrorAt: row.last_error_at === null ? null : new Date(row.last_error_at),
    };
  }
}
