import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { errorMessage } from '../common/error-message';
import { TOUCH_ONLY_SETTING } from '../database/profile-changes-channel';

/** Touches are gathered this long, then written in one statement. */
export const TOUCH_WINDOW_MS = 250;
/** A memory touched less than this long ago is not written again. */
export const TOUCH_RESOLUTION_MS = 60_000;
/** Memories remembered as sent within TOUCH_RESOLUTION_MS; past this the memory starts again. */
const REMEMBERED_TOUCHES = 100_000;

/**
 * "Last accessed" of the memories injected into prompts, written off the answer path. Every chat of a
 * user injects much the same memories, so the touches are gathered for a short window and written in
 * one statement that takes no row lock it would have to wait for (rows another transaction holds are
 * skipped, and a memory touched within the last minute is left as it is, and is not even sent when this
 * process sent it within that minute): concurrent chats of one user never queue on those rows, and
 * nothing here can deadlock. A touch only stops decay and feeds recency,
 * both counted in days, so a skipped or lost touch costs nothing that matters; for the same reason it
 * sends no profile change notification (TOUCH_ONLY_SETTING): held contexts take the new times when
 * they are next confirmed.
 */
@Injectable()
export class MemoryTouches {
  private readonly logger = new Logger('MemoryTouches');
  private pending = new Set<string>();
  /** When (performance.now()) this process last sent each memory's touch. */
  private sent = new Map<string, number>();
  private scheduled = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly background: BackgroundWork,
  ) {}

  touch(memoryIds: readonly string[]): void {
    const now = performance.now();
    for (const id of memoryIds) {
      const sentAt = this.sent.get(id);
      if (sentAt === undefined || now - sentAt >= TOUCH_RESOLUTION_MS) this.pending.add(id);
    }
    if (this.scheduled || this.pending.size === 0) return;
    this.scheduled = true;
    this.background.run('touch memories', async () => {
      await new Promise((resolve) => setTimeout(resolve, TOUCH_WINDOW_MS));
      this.scheduled = false;
      await this.flush();
    });
  }

  /** Writes the gathered touches now. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const ids = [...this.pending].sort();
    this.pending = new Set();
    try {
      await this.dataSource.transaction(async (manager) => {
        // no profile change notification for this statement (migration 1764700000000)
        await manager.query(`SELECT set_config($1, 'on', true)`, [TOUCH_ONLY_SETTING]);
        await manager.query(
          `UPDATE memories m SET last_accessed_at = now()
           FROM (SELECT id FROM memories
                 WHERE id = ANY($1::uuid[])
                   AND (last_accessed_at IS NULL OR last_accessed_at < now() - make_interval(secs => $2::float8 / 1000))
                 ORDER BY id
                 FOR UPDATE SKIP LOCKED) due
           WHERE m.id = due.id`,
          [ids, TOUCH_RESOLUTION_MS],
        );
      });
      this.remember(ids);
    } catch (error) {
      this.logger.warn(`last-accessed times of ${ids.length} memories not written: ${errorMessage(error)}`);
    }
  }

  /**
   * The memories just sent are not sent again within TOUCH_RESOLUTION_MS: the statement would find them
   * touched (by this or another process) and leave them, after looking each one up. Every chat of a user
   * touches much the same memories, so without this each statement carried every memory of every
   * recent chat, to update the few that were due.
   */
  private remember(ids: readonly string[]): void {
    const now = performance.now();
    if (this.sent.size + ids.length > REMEMBERED_TOUCHES) {
      for (const [id, sentAt] of this.sent) if (now - sentAt >= TOUCH_RESOLUTION_MS) this.sent.delete(id);
      if (this.sent.size + ids.length > REMEMBERED_TOUCHES) this.sent.clear();
    }
    for (const id of ids) this.sent.set(id, now);
  }
}
