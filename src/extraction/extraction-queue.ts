import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { queryInTransaction } from '../database/prepared-statements';
import { MAX_HEURISTIC_TEXT_CHARS } from './heuristic-extractor';
import type { RequestTraitSchema } from '../traits/request-trait-schemas';

/** Messages read at once when the next batch of a profile is built. */
const BATCH_READ_LIMIT = 50;
/**
 * Learning reads at most this many characters of a message (the LLM and the rules alike): a longer one is
 * a paste more than something the user says about themselves, and reading it whole from the database
 * would hold the event loop (an 8 MB message for tens of milliseconds) for nothing the rules read.
 */
export const MAX_LEARNT_MESSAGE_CHARS = MAX_HEURISTIC_TEXT_CHARS;
/** A batch ends before the user text it would send to the extractor passes this many characters. */
export const BATCH_TEXT_BUDGET = 24_000;
/** The longest pause before a failed batch is tried again. */
export const MAX_BACKOFF_MS = 3_600_000;

/** A batch of one profile's pending messages, claimed by this process until `claimedUntil`. */
export interface ClaimedBatch {
  profileId: string;
  /** Proves the claim is still ours when the result is applied; null for a batch read in place (no lease). */
  token: string | null;
  /** Every message of the batch (user and assistant): all are marked extracted together. */
  messageIds: string[];
  /** The user's messages: the only source of facts about the user. */
  userMessages: Array<{ id: string; content: string }>;
  /** The per-request trait schemas of the turns in the batch (they all have the same). */
  traitOverrides: RequestTraitSchema[];
  /** Failed extractions of the batch so far (its messages all have the same count). */
  attempts: number;
  /** Whether ready messages of the profile were left for a later batch when this one was claimed. */
  more: boolean;
}

export interface ExtractionStatus {
  pending: number;
  /** Pending messages waiting for the pause after a failure to end. */
  backingOff: number;
  /** Messages given up after their last attempt failed (requeue them to try again). */
  failed: number;
}

/** Given up: done, with the error of its last failed attempt kept, and not learnt by the rules instead. */
const GIVEN_UP = 'extracted_at IS NOT NULL AND extraction_error IS NOT NULL AND NOT extraction_fell_back';

/** Rolls back a claim that found part of its batch taken by another process meanwhile. */
class ClaimLostError extends Error {}

/** A batch's messages are under no live claim: none, or one whose process let it run out. */
const UNCLAIMED = '(claimed_until IS NULL OR claimed_until < now())';

interface PendingRow {
  id: string;
  role: string;
  content: string;
  trait_overrides: RequestTraitSchema[] | null;
  extraction_attempts: number;
}

/**
 * The to-do list of background extraction, in the messages table: a message is pending while
 * `extracted_at` is null, and done when it is set (with `extraction_error` kept when it was given up,
 * or when the rules learnt it after the LLM's last failed try: `extraction_fell_back`).
 *
 * Work is claimed by leases on the rows, never by holding a connection: a process claims a profile's
 * next batch in one short transaction (the profile row is locked with SKIP LOCKED while the claim is
 * made, and the claim is written only on messages under no live claim, so two processes never claim
 * batches of one profile at once), extracts with no connection held, and applies the result in a
 * transaction that marks the batch extracted only while the claim is still its own. A killed
 * process's claim runs out and another takes the batch over. A failed batch waits (`next_attempt_at`,
 * doubling from EXTRACTION_BACKOFF_MS up to an hour) and is retried alone: newer messages are batched
 * separately and do not spend their attempts on it.
 */
@Injectable()
export class ExtractionQueue {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Profiles with messages ready to be extracted now, oldest work first, leaving out `skip`. */
  async profilesWithWork(limit: number, skip: string[]): Promise<string[]> {
    const rows: Array<{ profile_id: string }> = await this.dataSource.query(
      `SELECT profile_id FROM messages
       WHERE extracted_at IS NULL AND next_attempt_at <= now()
         AND (claimed_until IS NULL OR claimed_until < now())
         AND NOT (profile_id = ANY($2::uuid[]))
       GROUP BY profile_id ORDER BY min(seq) LIMIT $1`,
      [limit, skip],
    );
    return rows.map((row) => row.profile_id);
  }

  /**
   * Claims the profile's oldest messages that are ready and can be extracted together: consecutive, with
   * the same per-request trait schemas and the same number of failed attempts, within the text budget.
   * Null when there are none, or another process is working on the profile.
   */
  async claimNextBatch(profileId: string, leaseMs: number): Promise<ClaimedBatch | null> {
    return this.dataSource
      .transaction(async (manager) => {
        const batch = await this.readNextBatch(manager, profileId, randomUUID());
        if (batch === null) return null;
        // The read's snapshot predates its lock of the profile: a rival's claim committed in between is
        // invisible to it, but not to this write, which takes only messages under no live claim.
        const { rowCount } = await queryInTransaction(
          manager,
          'extraction-claim-write-v2',
          `UPDATE messages SET claimed_until = now() + make_interval(secs => $3::float8 / 1000), claim_token = $2
           WHERE id = ANY($1::uuid[]) AND extracted_at IS NULL AND ${UNCLAIMED}`,
          [batch.messageIds, batch.token, leaseMs],
        );
        if (rowCount !== batch.messageIds.length) throw new ClaimLostError();
        return batch;
      })
      .catch((error: unknown) => {
        if (error instanceof ClaimLostError) return null;
        throw error;
      });
  }

  /**
   * For an extractor that waits on nothing (the heuristic): reads the profile's next batch and runs
   * `work` (which extracts it, marks it extracted with `complete` and applies it) in one transaction,
   * with no lease written. The transaction holds the profile row, as a claim does while it is made:
   * another process that would claim the profile finds nothing, and an erasure waits. Null when there
   * is nothing ready or another process has the profile. A batch costs one transaction, and each
   * message one update.
   */
  async extractInPlace<T>(
    profileId: string,
    work: (manager: EntityManager, batch: ClaimedBatch) => Promise<T>,
  ): Promise<{ batch: ClaimedBatch; result: T } | null> {
    return this.dataSource.transaction(async (manager) => {
      const batch = await this.readNextBatch(manager, profileId, null);
      return batch && { batch, result: await work(manager, batch) };
    });
  }

  /**
   * In one statement: the profile row locked (SKIP LOCKED: another process is claiming) and no batch of
   * it claimed by anyone, as one-time filters, then its ready messages in order from the index.
   */
  private async readNextBatch(
    manager: EntityManager,
    profileId: string,
    token: string | null,
  ): Promise<ClaimedBatch | null> {
    const { rows } = await queryInTransaction<PendingRow>(
      manager,
      'extraction-claim-read-v2',
      `WITH profile AS MATERIALIZED (SELECT id FROM profiles WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED)
       SELECT m.id, m.role, left(m.content, $3) AS content, m.trait_overrides, m.extraction_attempts
       FROM messages m
       WHERE m.profile_id = $1 AND m.extracted_at IS NULL AND m.next_attempt_at <= now()
         AND EXISTS (SELECT 1 FROM profile)
         AND NOT EXISTS (SELECT 1 FROM messages b
                         WHERE b.profile_id = $1 AND b.extracted_at IS NULL AND b.claimed_until >= now())
       ORDER BY m.seq LIMIT $2`,
      [profileId, BATCH_READ_LIMIT, MAX_LEARNT_MESSAGE_CHARS],
    );
    if (rows.length === 0) return null;
    const batch = batchOf(profileId, token, rows);
    return { ...batch, more: batch.messageIds.length < rows.length || rows.length === BATCH_READ_LIMIT };
  }

  /**
   * Inside the apply transaction: marks the batch extracted. False, changing nothing that survives the
   * rolled-back transaction, when the claim is no longer ours (it ran out and another process took the
   * batch) or a message is gone. A batch read in place has no claim: its messages must be under no live
   * claim of anyone (a dead process's expired claim is cleared; one renewed meanwhile keeps them).
   * `fellBackAfter` is the LLM's error when the rules learnt the batch instead: it is kept, with when.
   */
  async complete(manager: EntityManager, batch: ClaimedBatch, fellBackAfter?: string): Promise<boolean> {
    if (fellBackAfter !== undefined && batch.token !== null) {
      const { rowCount } = await queryInTransaction(
        manager,
        'extraction-complete-fell-back-v1',
        `UPDATE messages
         SET extracted_at = now(), extraction_error = $3, extraction_failed_at = now(),
             extraction_fell_back = true, extraction_attempts = extraction_attempts + 1,
             claimed_until = NULL, claim_token = NULL
         WHERE id = ANY($1::uuid[]) AND claim_token = $2 AND extracted_at IS NULL`,
        [batch.messageIds, batch.token, fellBackAfter.slice(0, 1000)],
      );
      return rowCount === batch.messageIds.length;
    }
    const { rowCount } =
      batch.token === null
        ? await queryInTransaction(
            manager,
            'extraction-complete-in-place-v1',
            `UPDATE messages
             SET extracted_at = now(), extraction_error = NULL, claimed_until = NULL, claim_token = NULL
             WHERE id = ANY($1::uuid[]) AND extracted_at IS NULL AND ${UNCLAIMED}`,
            [batch.messageIds],
          )
        : await queryInTransaction(
            manager,
            'extraction-complete-v1',
            `UPDATE messages
             SET extracted_at = now(), extraction_error = NULL, claimed_until = NULL, claim_token = NULL
             WHERE id = ANY($1::uuid[]) AND claim_token = $2 AND extracted_at IS NULL`,
            [batch.messageIds, batch.token],
          );
    return rowCount === batch.messageIds.length;
  }

  /**
   * Counts a failed attempt and lets the batch wait before it is tried again; at `maxAttempts` its
   * messages are given up (done, with the error kept).
   */
  async fail(batch: ClaimedBatch, error: string, maxAttempts: number, backoffMs: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE messages
       SET extraction_attempts = extraction_attempts + 1, extraction_error = $3, extraction_failed_at = now(),
           extracted_at = CASE WHEN extraction_attempts + 1 >= $4 THEN now() END,
           next_attempt_at = now() + make_interval(secs => least($5::float8 * power(2, extraction_attempts), $6) / 1000),
           claimed_until = NULL, claim_token = NULL
       WHERE id = ANY($1::uuid[]) AND extracted_at IS NULL
         AND CASE WHEN $2::uuid IS NULL THEN ${UNCLAIMED} ELSE claim_token = $2::uuid END`,
      [batch.messageIds, batch.token, error.slice(0, 1000), maxAttempts, backoffMs, MAX_BACKOFF_MS],
    );
  }

  /** Extends the claim while its process still works on it. False when it is no longer ours. */
  async renew(batch: ClaimedBatch, leaseMs: number): Promise<boolean> {
    const [, renewed]: [unknown[], number] = await this.dataSource.query(
      `UPDATE messages SET claimed_until = now() + make_interval(secs => $3::float8 / 1000)
       WHERE id = ANY($1::uuid[]) AND claim_token = $2 AND extracted_at IS NULL`,
      [batch.messageIds, batch.token, leaseMs],
    );
    return renewed > 0;
  }

  /** When the first claim of another (possibly dead) process runs out; null when nothing is claimed. */
  async nextClaimExpiry(): Promise<Date | null> {
    const [row]: Array<{ next: Date | string | null }> = await this.dataSource.query(
      `SELECT min(claimed_until) AS next FROM messages WHERE extracted_at IS NULL AND claimed_until >= now()`,
    );
    return row?.next == null ? null : new Date(row.next);
  }

  /** Gives a claimed batch back untouched (shutdown): the next process takes it at once. */
  async release(batch: ClaimedBatch): Promise<void> {
    await this.dataSource.query(
      `UPDATE messages SET claimed_until = NULL, claim_token = NULL
       WHERE id = ANY($1::uuid[]) AND claim_token = $2`,
      [batch.messageIds, batch.token],
    );
  }

  /** Puts the profile's given-up messages back in the queue, with their attempts counted afresh. */
  async requeueFailed(profileId: string, manager: EntityManager = this.dataSource.manager): Promise<number> {
    const [, requeued]: [unknown[], number] = await manager.query(
      `UPDATE messages
       SET extracted_at = NULL, extraction_error = NULL, extraction_failed_at = NULL, extraction_attempts = 0,
           next_attempt_at = now()
       WHERE profile_id = $1 AND ${GIVEN_UP}`,
      [profileId],
    );
    return requeued;
  }

  async status(profileId: string): Promise<ExtractionStatus> {
    const [row]: Array<{ pending: number; backing_off: number; failed: number }> =
      await this.dataSource.query(
        `SELECT count(*) FILTER (WHERE extracted_at IS NULL)::int AS pending,
              count(*) FILTER (WHERE extracted_at IS NULL AND next_attempt_at > now())::int AS backing_off,
              count(*) FILTER (WHERE ${GIVEN_UP})::int AS failed
       FROM messages WHERE profile_id = $1`,
        [profileId],
      );
    return { pending: row.pending, backingOff: row.backing_off, failed: row.failed };
  }
}

/** The first messages of `rows` that go together (always at least one). */
function batchOf(profileId: string, token: string | null, rows: PendingRow[]): Omit<ClaimedBatch, 'more'> {
  const first = rows[0];
  const overridesKey = JSON.stringify(first.trait_overrides);
  const batch: Omit<ClaimedBatch, 'more'> = {
    profileId,
    token,
    attempts: first.extraction_attempts,
    messageIds: [],
    userMessages: [],
    traitOverrides: first.trait_overrides ?? [],
  };
  let textLength = 0;
  for (const row of rows) {
    if (JSON.stringify(row.trait_overrides) !== overridesKey) break;
    if (row.extraction_attempts !== first.extraction_attempts) break;
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
