import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { JobLeases } from '../database/job-leases';

/** decayFactor is multiplied by this for every full day a memory goes unused... */
export const DAILY_DECAY_RATE = 0.95;
/** ...and never goes below this. */
export const DECAY_FLOOR = 0.1;
/** Longer than one decay statement takes, even over millions of memories. */
const DECAY_LEASE_MS = 10 * 60_000;

/**
 * The daily decay of memories (DESIGN §6). Each memory remembers up to when its unused days have been
 * counted (`decay_counted_until`); a run counts the full days since then, or since the memory was last
 * injected into a prompt when that is later (time in use does not count), multiplies decayFactor once by
 * 0.95^days and moves the mark on by those days. So a run is idempotent within a day, a missed day is
 * caught up by the next run, and a repeat of the memory (which resets decayFactor to 1) starts again from
 * there. Runs at boot and every MEMORY_DECAY_INTERVAL_MS (an UPDATE of the memories that crossed a day).
 */
@Injectable()
export class MemoryDecayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('MemoryDecayService');
  private stopRepeats: () => void = () => undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly background: BackgroundWork,
    private readonly leases: JobLeases,
  ) {}

  onApplicationBootstrap(): void {
    this.stopRepeats = this.background.repeat('memory decay', this.config.extraction.decayIntervalMs, () =>
      this.runScheduled(),
    );
  }

  beforeApplicationShutdown(): void {
    this.stopRepeats();
  }

  /**
   * Applies the decay due at the clock's current time; returns how many memories it updated. Each row
   * is updated only if its mark is still the one read: a run that overlaps another (two replicas) waits
   * for the other's row lock, then finds the mark moved and leaves the row alone, so no day is counted
   * twice.
   */
  async decay(): Promise<number> {
    const [, updated]: [unknown[], number] = await this.dataSource.query(
      `WITH due AS (
         SELECT id, counted_until, anchor,
                floor(extract(epoch FROM ($1::timestamptz - anchor)) / 86400)::int AS days
         FROM (
           SELECT id, decay_counted_until AS counted_until,
                  GREATEST(COALESCE(decay_counted_until, created_at),
                           COALESCE(last_accessed_at, created_at)) AS anchor
           FROM memories
         ) counted
         WHERE anchor <= $1::timestamptz - interval '1 day'
       )
       UPDATE memories m
       SET decay_factor = CASE WHEN m.decay_factor <= $3::float8 THEN m.decay_factor
                               ELSE GREATEST($3::float8, m.decay_factor * power($2::float8, due.days)) END,
           decay_counted_until = due.anchor + due.days * interval '1 day'
       FROM due
       WHERE m.id = due.id AND m.decay_counted_until IS NOT DISTINCT FROM due.counted_until`,
      [this.clock.now(), DAILY_DECAY_RATE, DECAY_FLOOR],
    );
    return updated;
  }

  /** One replica decays at a time; the others skip the run (the next one catches up anyway). */
  private async runScheduled(): Promise<void> {
    await this.leases.runExclusive('memory-decay', DECAY_LEASE_MS, async () => {
      const updated = await this.decay();
      if (updated > 0) this.logger.log(`decayed ${updated} memories`);
    });
  }
}
