import { errorMessage } from '../common/error-message';
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
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ExtractionOutcome, MetricsService } from '../metrics/metrics.service';
import { applyRequestSchemas } from '../traits/request-trait-schemas';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import { ConcurrencyLimiter } from './concurrency-limiter';
import { ExtractionAbortedError } from './extraction-errors';
import { ExtractionService } from './extraction.service';
import { PendingBatch, PendingMessages } from './pending-messages';
import { ProfileWorkLock } from './profile-work-lock';
import { SummaryService } from './summary.service';

/** Profiles looked up per query of a sweep. */
const SWEEP_PAGE = 100;
/** Bound on the batches of one profile in one run, so that no run can loop for ever. */
const MAX_BATCHES_PER_RUN = 200;

type BatchOutcome = 'changed' | 'unchanged' | 'failed' | 'stopped';

class BatchTakenError extends Error {}

const METRIC_OUTCOME: Record<BatchOutcome, ExtractionOutcome> = {
  changed: 'success',
  unchanged: 'success',
  failed: 'failure',
  stopped: 'aborted',
};

/**
 * Background extraction of the stored conversation messages. A profile is worked on by one run at a
 * time (here: one queue entry per profile; across processes: ProfileWorkLock), at most
 * EXTRACTION_CONCURRENCY profiles at once. A run takes the profile's pending messages batch by batch:
 * extract (no transaction open, so the embedded database's one connection stays free during the LLM
 * call), then in one short transaction mark the batch extracted and store the result. Marking only
 * succeeds while every message of the batch is still pending, so a batch is never applied twice.
 * A failure is counted on the batch's messages and retried by a later sweep, up to
 * EXTRACTION_MAX_ATTEMPTS. Sweeps run at boot and every EXTRACTION_SWEEP_INTERVAL_MS.
 */
@Injectable()
export class ExtractionWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ExtractionWorker');
  private readonly limiter: ConcurrencyLimiter;
  private readonly runs = new Map<string, Promise<void>>();
  private readonly runAgain = new Set<string>();
  private readonly stopping = new AbortController();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly extraction: ExtractionService,
    private readonly pending: PendingMessages,
    private readonly lock: ProfileWorkLock,
    private readonly schemas: TraitSchemaRegistry,
    private readonly summary: SummaryService,
    private readonly background: BackgroundWork,
    private readonly metrics: MetricsService,
  ) {
    this.limiter = new ConcurrencyLimiter(config.extraction.concurrency);
  }

  onApplicationBootstrap(): void {
    this.background.run('extraction sweep', () => this.sweep());
    const interval = this.config.extraction.sweepIntervalMs;
    if (interval > 0) {
      this.sweepTimer = setInterval(
        () => this.background.run('extraction sweep', () => this.sweep()),
        interval,
      );
      this.sweepTimer.unref();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.stopping.abort();
    await this.drain();
  }

  /** Extracts the profile's pending messages soon. Never rejects. */
  schedule(profileId: string): Promise<void> {
    if (this.stopping.signal.aborted) return Promise.resolve();
    const running = this.runs.get(profileId);
    if (running) {
      // Messages may have arrived after the running one read its last batch.
      this.runAgain.add(profileId);
      return running;
    }
    const run = this.runProfile(profileId).finally(() => this.runs.delete(profileId));
    this.runs.set(profileId, run);
    return run;
  }

  /** Schedules every profile with pending messages and resolves when they are done. Never rejects. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepAll()
      .catch((error: unknown) => this.logger.error(`extraction sweep failed: ${errorMessage(error)}`))
      .finally(() => {
        this.sweeping = null;
      });
    return this.sweeping;
  }

  /** Resolves when no extraction is running or queued in this process. */
  async drain(): Promise<void> {
    while (this.runs.size > 0 || this.sweeping) {
      await Promise.allSettled([...this.runs.values(), this.sweeping]);
    }
  }

  private async sweepAll(): Promise<void> {
    const seen: string[] = [];
    while (!this.stopping.signal.aborted) {
      const profiles = await this.pending.profilesWithPending(SWEEP_PAGE, seen);
      if (profiles.length === 0) return;
      seen.push(...profiles);
      await Promise.all(profiles.map((profileId) => this.schedule(profileId)));
    }
  }

  private async runProfile(profileId: string): Promise<void> {
    do {
      this.runAgain.delete(profileId);
      try {
        await this.limiter.run(() => this.extractProfile(profileId));
      } catch (error) {
        this.logger.error(`extraction of profile ${profileId} failed: ${errorMessage(error)}`);
      }
    } while (this.runAgain.has(profileId) && !this.stopping.signal.aborted);
  }

  private async extractProfile(profileId: string): Promise<void> {
    if (this.stopping.signal.aborted) return;
    let changed = false;
    const ran = await this.lock.tryWithLock(profileId, async () => {
      for (let round = 0; round < MAX_BATCHES_PER_RUN; round++) {
        if (this.stopping.signal.aborted) return;
        const batch = await this.pending.nextBatch(profileId);
        if (batch === null) return;
        const started = performance.now();
        const outcome = await this.extractBatch(profileId, batch);
        this.metrics.observeExtractionBatch(METRIC_OUTCOME[outcome], started);
        if (outcome === 'changed') changed = true;
        if (outcome === 'failed' || outcome === 'stopped') return;
      }
    });
    // When another process holds the profile it extracts these messages too, or a later sweep does.
    if (!ran) this.logger.debug(`profile ${profileId} is being extracted elsewhere`);
    if (changed && !this.stopping.signal.aborted) {
      await this.summary.refreshIfDue(profileId, this.stopping.signal);
    }
  }

  private async extractBatch(profileId: string, batch: PendingBatch): Promise<BatchOutcome> {
    const schemas = applyRequestSchemas(this.schemas.all(), batch.traitOverrides);
    const sourceIds = batch.userMessages.map((message) => message.id);
    try {
      const result = await this.extraction.extractConversation(
        batch.userMessages.map((message) => message.content),
        schemas,
        this.stopping.signal,
      );
      const applied = await this.dataSource.transaction(async (manager) => {
        if (!(await this.pending.markExtracted(manager, batch.messageIds))) throw new BatchTakenError();
        return this.extraction.apply(manager, profileId, result, schemas, sourceIds);
      });
      this.extraction.announce(profileId, applied);
      return applied.changed ? 'changed' : 'unchanged';
    } catch (error) {
      if (error instanceof ExtractionAbortedError) return 'stopped';
      if (error instanceof BatchTakenError) return 'unchanged';
      await this.pending.recordFailure(
        batch.messageIds,
        errorMessage(error),
        this.config.extraction.maxAttempts,
      );
      this.logger.warn(
        `extraction of ${batch.messageIds.length} message(s) of profile ${profileId} failed: ${errorMessage(error)}`,
      );
      return 'failed';
    }
  }
}
