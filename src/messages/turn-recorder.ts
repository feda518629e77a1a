import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork, SHUTDOWN_DRAIN_MS } from '../common/background-work';
import { errorMessage } from '../common/error-message';
import { ServingLoad } from '../common/serving-load';
import { jsonBytes } from '../common/text-slices';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { isForeignKeyViolation, isTransientDatabaseError } from '../common/database-errors';
import { queryNamed } from '../database/prepared-statements';
import type { RequestTraitSchema } from '../traits/request-trait-schemas';
import { CONVERSATION_RECORDED, ConversationRecordedEvent } from './conversation-events';

/** One completed turn: this turn's user messages and the assistant's reply. */
export interface CompletedTurn {
  profileId: string;
  /**
   * The user's messages of the turn, each with whether background extraction is to read it; one it
   * is not to read (skipExtraction, or nothing in it to learn) is stored as already extracted.
   */
  userMessages: Array<{ text: string; toLearn: boolean }>;
  /** Stored as already extracted: facts about the user come only from what the user says. */
  reply: string;
  model: string;
  /** The id of the request's log line. */
  requestId: string;
  traitOverrides: RequestTraitSchema[];
  /** What the proxy injected for the turn: trait keys and memory ids. */
  injected?: InjectedContext;
}

export interface InjectedContext {
  traits: readonly string[];
  memories: readonly string[];
}

interface MessageRow {
  profileId: string;
  role: 'user' | 'assistant';
  content: string;
  requestId: string;
  model: string;
  extracted: boolean;
  traitOverrides: string | null;
  injected: InjectedContext | null;
}

/** Turns written by one statement. */
const MAX_TURNS_PER_WRITE = 200;
/**
 * How long an answer's end waits for its turn's commit while the database keeps failing; past it the
 * answer ends and the turn stays queued, retried as before. (Checked at each retry, so an answer waits
 * at most this plus one backoff pause.)
 */
export const TURN_COMMIT_WAIT_MS = 5_000;
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5_000;

/** A turn waiting to be stored, and what to call once it is (or once its answer stops waiting). */
interface QueuedTurn {
  rows: MessageRow[];
  queuedAt: number;
  settle: (() => void) | undefined;
}

/**
 * Stores completed turns durably before their answers end: group commit. A turn waits in a bounded
 * queue; one writer at a time writes every turn queued (up to MAX_TURNS_PER_WRITE) in one INSERT, and
 * the turns that come while it writes go together in its next one, so concurrent requests share their
 * commits; while other answers are in flight the writer also takes the turns that end in the same turn
 * of the event loop (see `gather`), never waiting on a clock. The promise `store` returns resolves when
 * the turn's batch has committed: the pipeline ends the answer (the last byte of a body, a stream's
 * final event) only then, so a turn whose complete answer the client received is stored even if the
 * process dies the next moment. The writer takes a single pooled connection, holds no lock but its own
 * new rows (so it cannot deadlock with anything), and a transient database failure (lost connection,
 * pool timeout, lock timeout) is retried with backoff, never dropped; while it lasts, an answer waits
 * for its commit at most TURN_COMMIT_WAIT_MS. When the queue is full, `roomForTurn` waits, so load slows
 * down instead of piling up in memory. `conversation.recorded` is emitted after each commit for each
 * profile with messages to extract, which starts extraction. A turn that cannot be stored for good (its
 * profile was deleted meanwhile) is logged and let go.
 */
@Injectable()
export class TurnRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger('TurnRecorder');
  private readonly turns: QueuedTurn[] = [];
  private readonly roomWaiters: Array<() => void> = [];
  /** Room that `roomForTurn` gave and its `queue` call has not taken yet. */
  private reserved = 0;
  private writing = false;
  private giveUpAt = Infinity;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventEmitter2,
    private readonly background: BackgroundWork,
    private readonly load: ServingLoad,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Turns waiting to be stored. */
  get backlog(): number {
    return this.turns.length;
  }

  /** True when the queue is full and requests are waiting for their turn to be taken. */
  get saturated(): boolean {
    return this.turns.length + this.reserved >= this.config.turnQueueSize;
  }

  /** Waits for room in the queue, queues the turn; resolves once it is stored (see `queue`). */
  async store(turn: CompletedTurn): Promise<void> {
    await this.roomForTurn();
    return this.queue(turn);
  }

  /**
   * Resolves when the queue has room for a turn (at once, unless it is full) and keeps that room for
   * the caller's next `queue`, which must follow: so the queue stays within its bound however many
   * waiting requests are woken together.
   */
  async roomForTurn(): Promise<void> {
    while (this.saturated) await new Promise<void>((wake) => this.roomWaiters.push(wake));
    this.reserved++;
  }

  /**
   * Queues a turn now, in the room `roomForTurn` kept for it. Resolves when its batch has committed (or
   * it was let go for good), or once the database has kept failing for TURN_COMMIT_WAIT_MS.
   */
  queue(turn: CompletedTurn): Promise<void> {
    if (this.reserved > 0) this.reserved--;
    const rows = messageRows(turn);
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((settle) => {
      this.turns.push({ rows, queuedAt: Date.now(), settle });
      this.startWriter();
    });
  }

  /** At shutdown: stores what is queued, giving up on a database that stays down past the deadline. */
  async beforeApplicationShutdown(): Promise<void> {
    this.giveUpAt = Date.now() + SHUTDOWN_DRAIN_MS;
    while (this.writing) await new Promise((resolve) => setTimeout(resolve, 20));
    if (this.turns.length > 0) {
      this.logger.error(`${this.turns.length} turn(s) could not be stored before shutdown`);
      settle(this.turns);
    }
  }

  private startWriter(): void {
    if (this.writing) return;
    this.writing = true;
    this.background.run('store turns', async () => {
      try {
        await this.writeQueued();
      } finally {
        this.writing = false;
        // turns queued by requests that were woken as this writer finished: nobody else starts for them
        if (this.turns.length > 0 && Date.now() < this.giveUpAt) this.startWriter();
      }
    });
  }

  private async writeQueued(): Promise<void> {
    while (this.turns.length > 0) {
      await this.gather();
      const batch = this.turns.slice(0, MAX_TURNS_PER_WRITE);
      if (!(await this.storeWithRetry(batch.map((turn) => turn.rows)))) return;
      this.turns.splice(0, batch.length);
      settle(batch);
      this.roomWaiters.splice(0, batch.length).forEach((wake) => wake());
    }
  }

  /**
   * While other answers are in flight, waits for the rest of this turn of the event loop: answers that
   * arrived together (their I/O is handled in the same turn) then share one write. Alone, a turn is
   * written at once, so an answer one at a time waits for nothing but its own commit.
   */
  private async gather(): Promise<void> {
    if (this.load.inFlight <= this.turns.length) return;
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** While the database keeps failing: the answers that waited long enough for their turns end. */
  private stopWaitingPast(now: number): void {
    for (const turn of this.turns) {
      if (turn.queuedAt > now - TURN_COMMIT_WAIT_MS) break;
      turn.settle?.();
      turn.settle = undefined;
    }
  }

  /** Stores the batch; false only when the database stayed unusable past the shutdown deadline. */
  private async storeWithRetry(batch: MessageRow[][]): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.announce(await this.insert(batch.flat()));
        return true;
      } catch (error) {
        if (!isTransientDatabaseError(error)) {
          await this.storeOneByOne(batch, error);
          return true;
        }
        if (Date.now() >= this.giveUpAt) return false;
        const pause = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt);
        if (attempt === 0 || pause === MAX_RETRY_MS) {
          this.logger.warn(`storing ${batch.length} turn(s) failed, retrying: ${errorMessage(error)}`);
        }
        this.stopWaitingPast(Date.now());
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** A batch refused for good: each turn alone, so that one bad turn does not take the others down. */
  private async storeOneByOne(batch: MessageRow[][], batchError: unknown): Promise<void> {
    if (batch.length === 1) return this.letGo(batch[0], batchError);
    for (const turn of batch) {
      try {
        this.announce(await this.insert(turn));
      } catch (error) {
        if (isTransientDatabaseError(error)) await this.storeWithRetry([turn]);
        else this.letGo(turn, error);
      }
    }
  }

  private letGo(turn: MessageRow[], error: unknown): void {
    const requestId = turn[0].requestId;
    if (isForeignKeyViolation(error)) {
      this.logger.log(`turn of request ${requestId} not stored: its profile was deleted`);
    } else {
      this.logger.error(`turn of request ${requestId} could not be stored: ${errorMessage(error)}`);
    }
  }

  /**
   * Inserts the rows; returns those still to be extracted (the rest need nothing more). The rows go as
   * one JSON parameter: pg would escape each element of an array parameter with two regular-expression
   * replaces, on the event loop, for every text of every turn.
   *
   * The statement's own transaction commits with synchronous_commit off unless TURN_COMMIT_FLUSH is on:
   * the answers wait for this commit, and waiting for the disk's flush as well would add a flush (a few
   * milliseconds) to every answer while protecting only against a crash of the database server, not of
   * the service. `set_config(..., true)` lasts until the end of the statement's transaction, and the
   * commit reads the setting then.
   */
  private async insert(rows: MessageRow[]): Promise<Array<{ id: string; profile_id: string }>> {
    return queryNamed(
      this.dataSource,
      'record-turns-v5',
      `WITH commit_mode AS (
         SELECT set_config('synchronous_commit', COALESCE($2::text, current_setting('synchronous_commit')), true)
       ),
       inserted AS (
         INSERT INTO messages (profile_id, role, content, request_id, model, extracted_at, trait_overrides, injected)
         SELECT r.profile_id, r.role, r.content, r.request_id, r.model,
                CASE WHEN r.extracted THEN now() END, r.trait_overrides::jsonb, r.injected
         FROM commit_mode,
              ROWS FROM (json_to_recordset($1::json) AS ("profileId" uuid, role text, content text,
                "requestId" text, model text, extracted boolean, "traitOverrides" text, injected jsonb))
              WITH ORDINALITY AS r(profile_id, role, content, request_id, model, extracted, trait_overrides, injected, position)
         ORDER BY r.position
         RETURNING id, profile_id, extracted_at)
       SELECT id, profile_id FROM inserted WHERE extracted_at IS NULL`,
      // $1 as bytes encoded in slices (PostgreSQL reads json's binary form as its text): pg would encode
      // the text in one task, and a turn can carry megabytes
      [await jsonBytes(rows), this.config.turnCommitFlush ? null : 'off'],
    );
  }

  /** Extraction starts for each profile whose new messages are still to be extracted. */
  private announce(toExtract: Array<{ id: string; profile_id: string }>): void {
    const byProfile = new Map<string, string[]>();
    for (const row of toExtract) {
      const ids = byProfile.get(row.profile_id) ?? [];
      ids.push(row.id);
      byProfile.set(row.profile_id, ids);
    }
    for (const [profileId, messageIds] of byProfile) {
      const event: ConversationRecordedEvent = { profileId, messageIds };
      this.events.emit(CONVERSATION_RECORDED, event);
    }
  }
}

/**
 * A text of a turn as it is stored: PostgreSQL's text cannot hold NUL characters (dropped), nor a lone
 * UTF-16 surrogate, which has no UTF-8 form (replaced by U+FFFD, as encoding it to UTF-8 does).
 */
export function storedMessageText(text: string): string {
  const withoutNul = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
  return withoutNul.isWellFormed() ? withoutNul : withoutNul.toWellFormed();
}

/** Ends the wait of each turn's answer (once). */
function settle(turns: QueuedTurn[]): void {
  for (const turn of turns) {
    turn.settle?.();
    turn.settle = undefined;
  }
}

/** The rows of a turn: its non-empty user messages, then the reply. */
function messageRows(turn: CompletedTurn): MessageRow[] {
  const traitOverrides = turn.traitOverrides.length > 0 ? JSON.stringify(turn.traitOverrides) : null;
  const requestId = storedMessageText(turn.requestId);
  const model = storedMessageText(turn.model);
  const rows: MessageRow[] = [];
  const add = (role: MessageRow['role'], text: string, extracted: boolean) => {
    const content = storedMessageText(text);
    if (content.trim() === '') return;
    rows.push({
      profileId: turn.profileId,
      role,
      content,
      requestId,
      model,
      extracted,
      traitOverrides,
      injected: turn.injected ?? null,
    });
  };
  for (const message of turn.userMessages) add('user', message.text, !message.toLearn);
  add('assistant', turn.reply, true);
  return rows;
}
