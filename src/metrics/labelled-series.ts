import type { Registry } from 'prom-client';

type LabelValues = Record<string, string>;
/** One value per label name, in their order. */
type ValuesOf<Names extends readonly string[]> = { [K in keyof Names]: string };

/** A value as prom-client's Registry renders it: `labels` first, then `sharedLabels`. */
interface RenderedValue {
  labels: LabelValues | { le: number | string };
  sharedLabels?: LabelValues;
  value: number;
  metricName?: string;
}

/** A metric as prom-client's Registry reads it. */
interface RenderedMetric {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: RenderedValue[];
}

/**
 * A counter or histogram of the chat path, whose series are found by their label values joined into
 * one key and then updated with a few additions. prom-client's own metrics check, hash and copy the
 * labels object on every observation (0.5 to 1.3 µs each, six per chat). These register in the same
 * Registry as prom-client's metrics (it reads a metric's name, help, type and `get()`), and render the
 * same lines: a counter's series with its labels, a histogram's as `_bucket` (with `le` before the
 * series' labels, counts cumulative, `+Inf` last), `_sum` and `_count`, series in the order of their
 * first observation. The key joins the values with NUL, which none holds: they are HTTP methods,
 * route patterns, statuses and names the service chose.
 */
abstract class LabelledMetric<Names extends readonly string[], Series> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  protected readonly series = new Map<string, Series>();

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly labelNames: Names,
  ) {
    registry.registerMetric(this as never);
  }

  protected seriesOf(values: ValuesOf<Names>, make: (labels: LabelValues) => Series): Series {
    const key = values.length === 1 ? values[0] : values.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      if (values.length !== this.labelNames.length) {
        throw new Error(`${this.name} takes ${this.labelNames.length} label values`);
      }
      const labels: LabelValues = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]));
      series = make(labels);
      this.series.set(key, series);
    }
    return series;
  }

  abstract get(): Promise<RenderedMetric>;

  reset(): void {
    this.series.clear();
  }

  protected rendered(values: RenderedValue[]): Promise<RenderedMetric> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }
}

interface CounterSeries {
  labels: LabelValues;
  value: number;
}

export class LabelledCounter<Names extends readonly string[]> extends LabelledMetric<Names, CounterSeries> {
  readonly type = 'counter';

  /** Adds one to the series of these label values (in the order of the label names). */
  inc(...values: ValuesOf<Names>): void {
    this.seriesOf(values, (labels) => ({ labels, value: 0 })).value += 1;
  }

  get() {
    const values = [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
    return this.rendered(values);
  }
}

interface HistogramSeries {
  labels: LabelValues;
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

export class LabelledHistogram<Names extends readonly string[]> extends LabelledMetric<
  Names,
  HistogramSeries
> {
  readonly type = 'histogram';

  constructor(
    registry: Registry,
    name: string,
    help: string,
    labelNames: Names,
    private readonly bounds: readonly number[],
  ) {
    super(registry, name, help, labelNames);
  }

  /** Observes `value` in the series of these label values (in the order of the label names). */
  observe(value: number, ...values: ValuesOf<Names>): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite value: ${value}`);
    const series = this.seriesOf(values, (labels) => ({
      labels,
      counts: new Array<number>(this.bounds.length + 1).fill(0),
      sum: 0,
      count: 0,
    }));
    let bucket = 0;
    while (bucket < this.bounds.length && value > this.bounds[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += value;
    series.count++;
  }

  get() {
    const values: RenderedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i];
        values.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucketName });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucketName });
      values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count` });
    }
    return this.rendered(values);
  }
}
