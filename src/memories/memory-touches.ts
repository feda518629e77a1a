import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { errorMessage } from '../common/error-message';

/** Touches are gathered this long, then written in one statement. */
export const TOUCH_WINDOW_MS = 250;
/** A memory touched less than this long ago is not written again. */
export const TOUCH_RESOLUTION = '1 minute';

/**
 * "Last accessed" of the memories injected into prompts, written off the answer path. Every chat of a
 * user injects much the same memories, so the touches are gathered for a short window and written in
 * one statement that takes no row lock it would have to wait for (rows another transaction holds are
 * skipped, and a memory touched within the last minute is left as it is): concurrent chats of one user
 * never queue on those rows, and nothing here can deadlock. A touch only stops decay and feeds recency,
 * both counted in days, so a skipped or lost touch costs nothing that matters.
 */
@Injectable()
export class MemoryTouches {
  private readonly logger = new Logger('MemoryTouches');
  private pending = new Set<string>();
  private scheduled = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly background: BackgroundWork,
  ) {}

  touch(memoryIds: readonly string[]): void {
    if (memoryIds.length === 0) return;
    for (const id of memoryIds) this.pending.add(id);
    if (this.scheduled) return;
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
      await this.dataSource.query(
        `UPDATE memories m SET last_accessed_at = now()
         FROM (SELECT id FROM memories
               WHERE id = ANY($1::uuid[])
                 AND (last_accessed_at IS NULL OR last_accessed_at < now() - $2::interval)
               ORDER BY id
               FOR UPDATE SKIP LOCKED) due
         WHERE m.id = due.id`,
        [ids, TOUCH_RESOLUTION],
      );
    } catch (error) {
      this.logger.warn(`last-accessed times of ${ids.length} memories not written: ${errorMessage(error)}`);
    }
  }
}
