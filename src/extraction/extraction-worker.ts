import { errorMessage } from '../common/error-message';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { ServingLoad } from '../common/serving-load';
import { isForeignKeyViolation } from '../common/database-errors';
import { inProfileWrite } from '../database/profile-write-lock';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ExtractionOutcome, MetricsService } from '../metrics/metrics.service';
import { applyRequestSchemas } from '../traits/request-trait-schemas';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import { ConcurrencyLimiter } from './concurrency-limiter';
import { ExtractionAbortedError, ExtractionFailedError } from './extraction-errors';
import { ContextService } from '../context/context.service';
import { AppliedExtraction, ExtractionService } from './extraction.service';
import type { ExtractionResult } from './extraction-types';
import type { TraitSchema } from '../traits/trait-schema';
import { ClaimedBatch, ExtractionQueue } from './extraction-queue';
import { SummaryService } from './summary.service';

/** Profiles looked up per query of a sweep. */
const SWEEP_PAGE = 100;
/** Stored memories shown to the LLM extractor with each batch. */
const RELATED_MEMORIES = 10;
/** Bound on the batches of one profile in one run, so that no run can loop for ever. */
const MAX_BATCHES_PER_RUN = 200;
/** Slack after a claim runs out before the sweep that takes the batch over looks again. */
const TAKEOVER_SLACK_MS = 100;

type BatchOutcome = 'changed' | 'unchanged' | 'fellBack' | 'failed' | 'stopped';

/** The batch is no longer this process's to apply: another took it over, or completed it. */
class BatchTakenError extends Error {}

interface ExtractedBatch {
  batch: ClaimedBatch;
  outcome: BatchOutcome;
}

const METRIC_OUTCOME: Record<BatchOutcome, ExtractionOutcome> = {
  changed: 'success',
  unchanged: 'success',
  fellBack: 'fallback',
  failed: 'failure',
  stopped: 'aborted',
};

/**
 * Background extraction of the stored conversation messages. A profile is worked on by one run at a
 * time: in this process one queue entry per profile, across processes the lease of the batch being
 * extracted (ExtractionQueue). At most EXTRACTION_CONCURRENCY profiles at once. A run claims the
 * profile's pending messages batch by batch: claim (one short transaction), extract (no connection
 * held during the LLM call), then in one short transaction mark the batch extracted, if the claim is
 * still ours, and store the result; so a batch is never applied twice. The heuristic extractor waits on
 * nothing: its batch is read, extracted and applied in one transaction, with no claim written
 * (ExtractionQueue.extractInPlace). On the LLM's path the claim is renewed every third
 * of EXTRACTION_LEASE_MS while the run works, so a killed process's batch is taken over soon after its
 * claim runs out: a sweep that finds work claimed by another process looks again when that claim ends. A failure is counted on the batch, which then waits
 * (EXTRACTION_BACKOFF_MS, doubling) before a sweep tries it again, up to EXTRACTION_MAX_ATTEMPTS; after
 * the LLM's last failed try the heuristic rules learn from the batch instead (EXTRACTION_RULES_FALLBACK).
 * Sweeps run at boot and every EXTRACTION_SWEEP_INTERVAL_MS. Before each claim a run yields to answers
 * while they keep the process busy (ServingLoad), for at most EXTRACTION_YIELD_MAX_MS from when it was
 * scheduled: under a burst the answers get the CPU and the stored messages wait, durably, in the queue.
 */
@Injectable()
export class ExtractionWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ExtractionWorker');
  private readonly limiter: ConcurrencyLimiter;
  private readonly runs = new Map<string, Promise<void>>();
  private readonly runAgain = new Set<string>();
  private readonly stopping = new AbortController();
  private stopSweeps: () => void = () => undefined;
  private sweeping: Promise<void> | null = null;
  private takeoverTimer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly extraction: ExtractionService,
    private readonly queue: ExtractionQueue,
    private readonly schemas: TraitSchemaRegistry,
    private readonly summary: SummaryService,
    private readonly context: ContextService,
    private readonly background: BackgroundWork,
    private readonly metrics: MetricsService,
    private readonly load: ServingLoad,
  ) {
    this.limiter = new ConcurrencyLimiter(config.extraction.concurrency);
  }

  onApplicationBootstrap(): void {
    this.stopSweeps = this.background.repeat('extraction sweep', this.config.extraction.sweepIntervalMs, () =>
      this.sweep(),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopSweeps();
    clearTimeout(this.takeoverTimer);
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
      const profiles = await this.queue.profilesWithWork(SWEEP_PAGE, seen);
      if (profiles.length === 0) break;
      seen.push(...profiles);
      await Promise.all(profiles.map((profileId) => this.schedule(profileId)));
    }
    await this.sweepAgainWhenClaimsRunOut();
  }

  /**
   * Work claimed by another process is left to it; if that process died, its claim runs out and a
   * sweep then takes the work over, also when periodic sweeps are off.
   */
  private async sweepAgainWhenClaimsRunOut(): Promise<void> {
    if (this.stopping.signal.aborted || this.takeoverTimer) return;
    const next = await this.queue.nextClaimExpiry();
    if (next === null) return;
    this.takeoverTimer = setTimeout(
      () => {
        this.takeoverTimer = undefined;
        this.background.run('extraction sweep', () => this.sweep());
      },
      Math.max(0, next.getTime() - Date.now()) + TAKEOVER_SLACK_MS,
    );
    this.takeoverTimer.unref();
  }

  private async runProfile(profileId: string): Promise<void> {
    do {
      this.runAgain.delete(profileId);
      // how long this run may wait for answers that keep the process busy, from now, not from its turn
      // in the limiter: so learning lags a busy process by a bounded time, then takes its share again
      const yieldUntil = performance.now() + this.config.extraction.yieldMaxMs;
      try {
        await this.limiter.run(() => this.extractProfile(profileId, yieldUntil));
      } catch (error) {
        this.logger.error(`extraction of profile ${profileId} failed: ${errorMessage(error)}`);
      }
    } while (this.runAgain.has(profileId) && !this.stopping.signal.aborted);
  }

  private async extractProfile(profileId: string, yieldUntil: number): Promise<void> {
    let changed = false;
    for (let round = 0; round < MAX_BATCHES_PER_RUN && !this.stopping.signal.aborted; round++) {
      // nothing is claimed while waiting, so another, less busy replica can take the work meanwhile
      if (performance.now() < yieldUntil && this.load.busy()) {
        this.metrics.observeExtractionYield();
        await this.load.yieldWhileBusy(yieldUntil, this.stopping.signal);
        if (this.stopping.signal.aborted) break;
      }
      const started = performance.now();
      // Null also when another process is extracting this profile: it takes these messages too.
      const done =
        this.extraction.mode === 'heuristic'
          ? await this.extractInPlace(profileId)
          : await this.claimAndExtract(profileId);
      if (done === null) break;
      this.metrics.observeExtractionBatch(METRIC_OUTCOME[done.outcome], started);
      if (done.outcome === 'changed' || done.outcome === 'fellBack') changed = true;
      // messages stored after the claim bring their own run (schedule), so a batch that took every
      // ready message is the last
      if (done.outcome === 'failed' || done.outcome === 'stopped' || !done.batch.more) break;
    }
    if (changed && !this.stopping.signal.aborted) {
      await this.summary.refreshIfDue(profileId, this.stopping.signal);
    }
  }

  /** The LLM's path: the batch is claimed (a lease), extracted with no connection held, then applied. */
  private async claimAndExtract(profileId: string): Promise<ExtractedBatch | null> {
    const batch = await this.queue.claimNextBatch(profileId, this.config.extraction.leaseMs);
    return batch && { batch, outcome: await this.extractBatch(batch) };
  }

  /**
   * The heuristic's path: it waits on nothing, so the batch is read, extracted and applied in one
   * transaction (ExtractionQueue.extractInPlace), with no lease to write and clear.
   */
  private async extractInPlace(profileId: string): Promise<ExtractedBatch | null> {
    let read: ClaimedBatch | null = null;
    try {
      const done = await this.queue.extractInPlace(profileId, async (manager, batch) => {
        read = batch;
        const { schemas, texts } = this.inputsOf(batch);
        const result = await this.extraction.extractConversation(texts, schemas, this.stopping.signal);
        return this.applyBatch(manager, batch, result, schemas);
      });
      if (done === null) return null;
      this.extraction.announce(profileId, done.result);
      return { batch: done.batch, outcome: done.result.changed ? 'changed' : 'unchanged' };
    } catch (error) {
      if (read === null) throw error; // no batch read: the run ends, and logs why
      const batch: ClaimedBatch = read;
      return { batch, outcome: await this.failed(batch, error) };
    }
  }

  /** What the extractor reads of a batch (the user's messages), and the trait schemas it follows. */
  private inputsOf(batch: ClaimedBatch): { schemas: TraitSchema[]; texts: string[] } {
    return {
      schemas: applyRequestSchemas(this.schemas.all(), batch.traitOverrides),
      texts: batch.userMessages.map((message) => message.content),
    };
  }

  /**
   * Inside the apply transaction: marks the batch extracted if it is still ours, then stores the result.
   * `fellBackAfter`: the LLM's error, when the result is the rules' reading instead.
   */
  private async applyBatch(
    manager: EntityManager,
    batch: ClaimedBatch,
    result: ExtractionResult,
    schemas: readonly TraitSchema[],
    fellBackAfter?: string,
  ): Promise<AppliedExtraction> {
    if (!(await this.queue.complete(manager, batch, fellBackAfter))) throw new BatchTakenError();
    const sourceIds = batch.userMessages.map((message) => message.id);
    return this.extraction.apply(manager, batch.profileId, result, schemas, sourceIds, 'extraction');
  }

  /** The LLM's batch, claimed: extracted with no connection held, then applied if still ours. */
  private async extractBatch(batch: ClaimedBatch): Promise<BatchOutcome> {
    const { schemas, texts } = this.inputsOf(batch);
    const stopRenewing = this.keepClaimed(batch);
    try {
      // the LLM is shown the stored memories most related to the turn, so that it can revise them
      const known = await this.context.relatedMemories(batch.profileId, texts.join('\n'), RELATED_MEMORIES);
      const result = await this.extraction.extractConversation(texts, schemas, this.stopping.signal, known);
      const taken = () => new BatchTakenError();
      const applied = await inProfileWrite(this.dataSource, batch.profileId, taken, (manager) =>
        this.applyBatch(manager, batch, result, schemas),
      );
      this.extraction.announce(batch.profileId, applied);
      return applied.changed ? 'changed' : 'unchanged';
    } catch (error) {
      if (error instanceof ExtractionAbortedError) {
        await this.queue.release(batch).catch(() => undefined); // else its lease runs out
        return 'stopped';
      }
      return await this.failed(batch, error);
    } finally {
      stopRenewing();
    }
  }

  /**
   * A batch whose extraction or apply threw: nothing to count when another process took it over or
   * completed it, or its profile (and its messages) was deleted meanwhile. After the LLM's last failed
   * try the rules learn from it (when EXTRACTION_RULES_FALLBACK is on); else a failed attempt is counted
   * on it, and it waits before it is tried again, or is given up after its last.
   */
  private async failed(batch: ClaimedBatch, error: unknown): Promise<BatchOutcome> {
    if (error instanceof BatchTakenError || isForeignKeyViolation(error)) return 'unchanged';
    const cause = error instanceof ExtractionFailedError ? error.failureCause : 'internal';
    const description = `extraction of ${batch.messageIds.length} message(s) of profile ${batch.profileId} failed: ${errorMessage(error)}`;
    if (this.isLlmsLastTry(batch, error)) {
      try {
        await this.learnWithRules(batch, errorMessage(error));
        this.metrics.observeExtractionFailure(cause, true);
        this.logger.warn(`${description}; the rules learnt from it instead`);
        return 'fellBack';
      } catch (fallbackError) {
        if (fallbackError instanceof BatchTakenError || isForeignKeyViolation(fallbackError))
          return 'unchanged';
        this.logger.warn(`the rules could not learn from the batch either: ${errorMessage(fallbackError)}`);
      }
    }
    this.metrics.observeExtractionFailure(cause, false);
    const { maxAttempts, backoffMs } = this.config.extraction;
    await this.queue.fail(batch, errorMessage(error), maxAttempts, backoffMs);
    this.logger.warn(description);
    return 'failed';
  }

  /**
   * Whether the LLM will not be asked about this batch again: its extraction failed on the batch's last
   * background attempt, or in a way that trying again cannot mend (a rejected request). Only the LLM's
   * failures count: a batch whose apply failed is retried as it is.
   */
  private isLlmsLastTry(batch: ClaimedBatch, error: unknown): boolean {
    if (!this.config.extraction.rulesFallback || batch.token === null) return false;
    if (!(error instanceof ExtractionFailedError)) return false;
    return !error.transient || batch.attempts + 1 >= this.config.extraction.maxAttempts;
  }

  /** The rules' reading of a claimed batch, applied and marked extracted with the LLM's error kept. */
  private async learnWithRules(batch: ClaimedBatch, llmError: string): Promise<void> {
    const { schemas, texts } = this.inputsOf(batch);
    const result = await this.extraction.extractConversationWithRules(texts, schemas);
    const taken = () => new BatchTakenError();
    const applied = await inProfileWrite(this.dataSource, batch.profileId, taken, (manager) =>
      this.applyBatch(manager, batch, result, schemas, llmError),
    );
    this.extraction.announce(batch.profileId, applied);
  }

  /** Renews the batch's claim every third of the lease until the returned function is called. */
  private keepClaimed(batch: ClaimedBatch): () => void {
    const { leaseMs } = this.config.extraction;
    const renewal = setInterval(() => {
      this.queue.renew(batch, leaseMs).catch((error: unknown) => {
        this.logger.warn(
          `claim of a batch of profile ${batch.profileId} not renewed: ${errorMessage(error)}`,
        );
      });
    }, leaseMs / 3);
    renewal.unref();
    return () => clearInterval(renewal);
  }
}
