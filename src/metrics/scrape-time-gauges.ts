import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { ProfileChangeFeed } from '../database/profile-changes';
import { TurnRecorder } from '../messages/turn-recorder';
import { METRIC_PREFIX, MetricsService } from './metrics.service';

/** The part of pg's Pool that the gauges read. */
interface PgPoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options?: { max?: number };
}

/** A scrape does not wait longer than this for the count of pending messages. */
const PENDING_QUERY_TIMEOUT_MS = 1_000;

/**
 * Gauges whose value is read when Prometheus scrapes: the database pool (both targets use pg's Pool),
 * the extraction backlog (messages still to extract, shared by all replicas since it is read from the
 * database), and the work this process runs after responses.
 */
@Injectable()
export class ScrapeTimeGauges {
  private readonly logger = new Logger('Metrics');

  constructor(
    metrics: MetricsService,
    @InjectDataSource() private readonly dataSource: DataSource,
    background: BackgroundWork,
    turns: TurnRecorder,
    changes: ProfileChangeFeed,
  ) {
    const registers = [metrics.registry];
    new Gauge({
      name: `${METRIC_PREFIX}db_pool_connections`,
      help: 'Connections of the database pool, by state (active = checked out by a query or transaction)',
      labelNames: ['state'] as const,
      registers,
      collect: function () {
        const pool = poolOf(dataSource);
        if (!pool) return;
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'active' }, pool.totalCount - pool.idleCount);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}db_pool_waiting_requests`,
      help: 'Queries waiting for a free connection of the database pool',
      registers,
      collect: function () {
        const pool = poolOf(dataSource);
        if (pool) this.set(pool.waitingCount);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}db_pool_max_connections`,
      help: 'Size limit of the database pool',
      registers,
      collect: function () {
        const max = poolOf(dataSource)?.options?.max;
        if (typeof max === 'number') this.set(max);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}profile_changes_live`,
      help: 'Whether this process hears every profile change (1), so that it may use held contexts without asking the database; 0 while its change listener is down',
      registers,
      collect: function () {
        this.set(changes.isLive ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}notify_queue_usage`,
      help: "Share of PostgreSQL's notification queue in use (a listening session that stops reading holds it back; full, it fails every write)",
      registers,
      collect: function () {
        const usage = changes.notifyQueueUsage;
        if (usage !== null) this.set(usage);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}turns_queued`,
      help: 'Completed turns waiting in this process to be stored (requests wait when the queue is full)',
      registers,
      collect: function () {
        this.set(turns.backlog);
      },
    });
    const countPending = () => this.countPendingMessages();
    new Gauge({
      name: `${METRIC_PREFIX}extraction_queue_messages`,
      help: 'Stored conversation messages still waiting for extraction (the durable queue, all replicas)',
      registers,
      collect: async function () {
        const pending = await countPending();
        if (pending !== null) this.set(pending);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}background_tasks`,
      help: 'Work running in this process after its response was sent (turn recording, extraction runs)',
      registers,
      collect: function () {
        this.set(background.pending);
      },
    });
  }

  private async countPendingMessages(): Promise<number | null> {
    if (!this.dataSource.isInitialized) return null;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), PENDING_QUERY_TIMEOUT_MS);
    });
    const query = this.dataSource
      .query<Array<{ pending: number }>>(
        'SELECT count(*)::int AS pending FROM messages WHERE extracted_at IS NULL',
      )
      .then((rows) => rows[0]?.pending ?? 0)
      .catch((error: unknown) => {
        this.logger.warn(`could not count pending messages: ${String(error)}`);
        return null;
      });
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function poolOf(dataSource: DataSource): PgPoolCounts | null {
  if (!dataSource.isInitialized) return null;
  const pool = (dataSource.driver as unknown as { master?: PgPoolCounts }).master;
  return pool && typeof pool.totalCount === 'number' ? pool : null;
}
