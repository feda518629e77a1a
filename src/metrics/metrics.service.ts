import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { UpstreamObservation, UpstreamObserver } from './upstream-observation';
import { LabelledCounter, LabelledHistogram } from './labelled-series';

/** Every metric of the service starts with this (process and Node.js metrics keep their usual names). */
export const METRIC_PREFIX = 'pms_';

export type ExtractionOutcome = 'success' | 'fallback' | 'failure' | 'aborted';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const UPSTREAM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
const CONTEXT_ITEM_BUCKETS = [0, 1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 100];

/**
 * The Prometheus registry of one application and the metrics that code updates as things happen.
 * Gauges read at scrape time live in ScrapeTimeGauges. Each app has its own registry (not prom-client's
 * global one), so several apps in one process (tests) do not collide.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  // the metrics of every chat: series bound to their label values (LabelledCounter, LabelledHistogram)
  private readonly httpRequests = new LabelledCounter(
    this.registry,
    `${METRIC_PREFIX}http_requests_total`,
    'HTTP requests answered, by method, route pattern and status',
    ['method', 'route', 'status'] as const,
  );
  private readonly httpDuration = new LabelledHistogram(
    this.registry,
    `${METRIC_PREFIX}http_request_duration_seconds`,
    'Time from request to the end of the response (streams included), by method, route pattern and status',
    ['method', 'route', 'status'] as const,
    LATENCY_BUCKETS,
  );
  private readonly upstreamDuration = new LabelledHistogram(
    this.registry,
    `${METRIC_PREFIX}upstream_request_duration_seconds`,
    'Time until the upstream LLM provider answered with headers (or failed), by client and status',
    ['client', 'status'] as const,
    UPSTREAM_BUCKETS,
  );
  private readonly upstreamErrors = new LabelledCounter(
    this.registry,
    `${METRIC_PREFIX}upstream_errors_total`,
    'Upstream calls that timed out, could not connect, or answered 429 or 5xx, by client and reason',
    ['client', 'reason'] as const,
  );
  private readonly injectedContext = new LabelledHistogram(
    this.registry,
    `${METRIC_PREFIX}proxy_injected_context_items`,
    'Traits and memories injected into one proxied chat request',
    ['kind'] as const,
    CONTEXT_ITEM_BUCKETS,
  );
  private readonly standingContexts = new LabelledCounter(
    this.registry,
    `${METRIC_PREFIX}context_standing_total`,
    'Contexts built, by whether their held part (a small profile whole, else summary, traits and standing memories) was held and confirmed by the database, held and trusted without asking it (no change notified), or sent again',
    ['result'] as const,
  );
  private readonly extractionRuns = new Counter({
    name: `${METRIC_PREFIX}extraction_batches_total`,
    help: 'Background extraction batches, by outcome (success, fallback: learnt by the rules after the LLM failed, failure, aborted by shutdown)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly extractionDuration = new Histogram({
    name: `${METRIC_PREFIX}extraction_batch_duration_seconds`,
    help: 'Time to extract and store one background batch, by outcome',
    labelNames: ['outcome'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers: [this.registry],
  });

  private readonly extractionFailures = new Counter({
    name: `${METRIC_PREFIX}extraction_failures_total`,
    help: 'Failed background extractions of a batch, by cause (unusable_answer, rejected, call_failed, unavailable, internal)',
    labelNames: ['cause'] as const,
    registers: [this.registry],
  });
  private readonly extractionFallbacks = new Counter({
    name: `${METRIC_PREFIX}extraction_fallbacks_total`,
    help: "Batches the rules learnt from after the LLM's last failed try, by the LLM's failure cause",
    labelNames: ['cause'] as const,
    registers: [this.registry],
  });

  private readonly extractionYields = new Counter({
    name: `${METRIC_PREFIX}extraction_yields_total`,
    help: 'Times background extraction waited before a claim because answers kept the process busy',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    for (const outcome of ['success', 'fallback', 'failure', 'aborted'] as const) {
      this.extractionRuns.inc({ outcome }, 0);
    }
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
    const code = String(status);
    this.httpRequests.inc(method, route, code);
    this.httpDuration.observe(seconds, method, route, code);
  }

  observeInjectedContext(traits: number, memories: number): void {
    this.injectedContext.observe(traits, 'traits');
    this.injectedContext.observe(memories, 'memories');
  }

  /**
   * `held`: the database confirmed the held copy; `trusted`: used without asking the database (no
   * change notified since it last confirmed it); `sent`: the database sent it again.
   */
  observeStandingContext(result: 'held' | 'trusted' | 'sent'): void {
    this.standingContexts.inc(result);
  }

  /** For `UpstreamClientOptions.observer`: `client` names which upstream client (proxy, extraction). */
  upstreamObserver(client: string): UpstreamObserver {
    return (observation: UpstreamObservation) => {
      const status = observation.failure ?? String(observation.status);
      this.upstreamDuration.observe(observation.seconds, client, status);
      const reason = upstreamErrorReason(observation);
      if (reason !== null) this.upstreamErrors.inc(client, reason);
    };
  }

  /**
   * Hook for background extraction: call once per batch with its outcome and its start
   * (`performance.now()` at the start of the batch).
   */
  observeExtractionBatch(outcome: ExtractionOutcome, startedAt: number): void {
    this.extractionRuns.inc({ outcome });
    this.extractionDuration.observe({ outcome }, (performance.now() - startedAt) / 1000);
  }

  /** A batch's extraction failed (`cause`); `fellBack` when the rules then learnt from it. */
  observeExtractionFailure(cause: string, fellBack: boolean): void {
    this.extractionFailures.inc({ cause });
    if (fellBack) this.extractionFallbacks.inc({ cause });
  }

  observeExtractionYield(): void {
    this.extractionYields.inc();
  }
}

function upstreamErrorReason(observation: UpstreamObservation): string | null {
  if (observation.failure === 'aborted') return null; // our client left; not the upstream's fault
  if (observation.failure !== null) return observation.failure;
  if (observation.status === 429) return 'rate_limited';
  if (observation.status !== null && observation.status >= 500) return 'server_error';
  return null;
}
