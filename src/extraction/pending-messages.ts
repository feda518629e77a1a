import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RequestTraitSchema } from '../traits/request-trait-schemas';

/** Messages read at once when the next batch of a profile is built. */
const BATCH_READ_LIMIT = 50;
/** A batch ends before the user text it would send to the extractor passes this many characters. */
export const BATCH_TEXT_BUDGET = 24_000;

export interface PendingBatch {
  /** Every message of the batch (user and assistant): all are marked extracted together. */
  messageIds: string[];
  /** The user's messages: the only source of facts about the user. */
  userMessages: Array<{ id: string; content: string }>;
  /** The per-request trait schemas of the turns in the batch (they all have the same). */
  traitOverrides: RequestTraitSchema[];
}

interface PendingRow {
  id: string;
  role: string;
  content: string;
  trait_overrides: RequestTraitSchema[] | null;
}

/**
 * The to-do list of background extraction: messages with `extracted_at` null. A message is done when
 * `extracted_at` is set; one that failed `maxAttempts` times is done too, with `extraction_error` kept.
 */
@Injectable()
export class PendingMessages {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Profiles with pending messages, oldest work first, leaving out `skip`. */
  async profilesWithPending(limit: number, skip: string[]): Promise<string[]> {
    const rows: Array<{ profile_id: string }> = await this.dataSource.query(
      `SELECT profile_id FROM messages
       WHERE extracted_at IS NULL AND NOT (profile_id = ANY($2::uuid[]))
       GROUP BY profile_id ORDER BY min(seq) LIMIT $1`,
      [limit, skip],
    );
    return rows.map((row) => row.profile_id);
  }

  /**
   * The oldest pending messages of a profile that can be extracted together: consecutive, with the same
   * per-request trait schemas, within the text budget (always at least one message).
   */
  async nextBatch(profileId: string): Promise<PendingBatch | null> {
    const rows: PendingRow[] = await this.dataSource.query(
      `SELECT id, role, content, trait_overrides FROM messages
       WHERE profile_id = $1 AND extracted_at IS NULL ORDER BY seq LIMIT $2`,
      [profileId, BATCH_READ_LIMIT],
    );
    if (rows.length === 0) return null;
    const overridesKey = JSON.stringify(rows[0].trait_overrides);
    const batch: PendingBatch = {
      messageIds: [],
      userMessages: [],
      traitOverrides: rows[0].trait_overrides ?? [],
    };
    let textLength = 0;
    for (const row of rows) {
      if (JSON.stringify(row.trait_overrides) !== overridesKey) break;
      const isUser = row.role === 'user';
      if (isUser && batch.messageIds.length > 0 && textLength + row.content.length > BATCH_TEXT_BUDGET) break;
      batch.messageIds.push(row.id);
      if (isUser) {
        batch.userMessages.push({ id: row.id, content: row.content });
        textLength += row.content.length;
      }
    }
    return batch;
  }

  /**
   * Marks the batch extracted inside the apply transaction. Returns false, changing nothing that
   * survives the transaction, when any of its messages was already done or is gone: another worker
   * got there first, and the caller must roll back.
   */
  async markExtracted(manager: EntityManager, messageIds: string[]): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, affected row count].
    const [, claimed]: [unknown[], number] = await manager.query(
      `UPDATE messages SET extracted_at = now(), extraction_error = NULL
       WHERE id = ANY($1::uuid[]) AND extracted_at IS NULL`,
      [messageIds],
    );
    return claimed === messageIds.length;
  }

  /** Counts a failed try; at `maxAttempts` the messages are given up (done, with the error kept). */
  async recordFailure(messageIds: string[], error: string, maxAttempts: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE messages
       SET extraction_attempts = extraction_attempts + 1, extraction_error = $2,
           extracted_at = CASE WHEN extraction_attempts + 1 >= $3 THEN now() END
       WHERE id = ANY($1::uuid[]) AND extracted_at IS NULL`,
      [messageIds, error.slice(0, 1000), maxAttempts],
    );
  }
}
