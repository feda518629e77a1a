import { Counter, Histogram, Registry } from 'prom-client';
import { LabelledCounter, LabelledHistogram } from './labelled-series';

const BOUNDS = [0, 0.5, 1, 2.5];
const LABELS = ['method', 'route', 'status'] as const;
/** Label values as a scrape must escape them, and values on, between and beyond the bounds. */
const OBSERVATIONS: Array<[number, string, string, string]> = [
  [0.5, 'POST', '/v1/chat/completions', '200'],
  [0, 'GET', '/api/profiles/:id', '404'],
  [3, 'POST', '/v1/chat/completions', '200'],
  [-1, 'POST', 'a "quoted" \\ route\nwith a newline', '500'],
  [0.75, 'GET', '/api/profiles/:id', '404'],
  [2.5, 'POST', '/v1/chat/completions', '200'],
  [1e-9, 'PUT', 'ünïcode ✓', '201'],
];

describe('LabelledCounter and LabelledHistogram', () => {
  it("render what prom-client's counter and histogram render for the same observations", async () => {
    const expected = new Registry();
    const counter = new Counter({
      name: 'c_total',
      help: 'A count',
      labelNames: LABELS,
      registers: [expected],
    });
    const histogram = new Histogram({
      name: 'h_seconds',
      help: 'A time, with "quotes" and a \\',
      labelNames: LABELS,
      buckets: BOUNDS,
      registers: [expected],
    });
    const actual = new Registry();
    const labelledCounter = new LabelledCounter(actual, 'c_total', 'A count', LABELS);
    const labelledHistogram = new LabelledHistogram(
      actual,
      'h_seconds',
      'A time, with "quotes" and a \\',
      LABELS,
      BOUNDS,
    );
    for (const [value, method, route, status] of OBSERVATIONS) {
      counter.inc({ method, route, status });
      histogram.observe({ method, route, status }, value);
      labelledCounter.inc(method, route, status);
      labelledHistogram.observe(value, method, route, status);
    }
    const rendered = await actual.metrics();
    expect(rendered).toBe(await expected.metrics());
    expect(rendered).toContain(
      'h_seconds_bucket{le="+Inf",method="POST",route="/v1/chat/completions",status="200"} 3',
    );
  });

  it('render one label the same way, and nothing before the first observation', async () => {
    const expected = new Registry();
    const histogram = new Histogram({
      name: 'items',
      help: 'Items',
      labelNames: ['kind'],
      buckets: [0, 1, 5],
      registers: [expected],
    });
    const actual = new Registry();
    const labelled = new LabelledHistogram(actual, 'items', 'Items', ['kind'], [0, 1, 5]);
    expect(await actual.metrics()).toBe(await expected.metrics());
    for (const [kind, value] of [
      ['traits', 3],
      ['memories', 10],
      ['traits', 0],
    ] as const) {
      histogram.observe({ kind }, value);
      labelled.observe(value, kind);
    }
    expect(await actual.metrics()).toBe(await expected.metrics());
  });

  it('refuses a value that is not finite, and label values of another count', () => {
    const registry = new Registry();
    const histogram = new LabelledHistogram(registry, 'h', 'H', ['kind'], [1]);
    expect(() => histogram.observe(Number.NaN, 'a')).toThrow(TypeError);
    expect(() => histogram.observe(1, 'a', 'b')).toThrow(/takes 1 label values/);
    expect(() => new LabelledCounter(registry, 'h', 'Again', ['kind'])).toThrow(/already been registered/);
  });
});
