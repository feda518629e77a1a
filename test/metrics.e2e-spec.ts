import { randomUUID } from 'node:crypto';
import { expectEnvelope } from './support/factories';
import { Exposition, matching, parsePrometheusText, valueOf } from './support/prometheus-text';
import { useTestApp } from './support/test-app';
import { chatRequest } from './support/clients';

const SERVICE_KEY = 'svc-key-for-metrics-tests';

describe('Prometheus metrics at /metrics', () => {
  const t = useTestApp({
    upstream: 'openai',
    serviceKey: SERVICE_KEY,
    env: { UPSTREAM_TIMEOUT_MS: '500' },
  });
  const auth = { Authorization: `Bearer ${SERVICE_KEY}` };

  const scrape = async (): Promise<Exposition> => {
    const res = await t.api().get('/metrics').set(auth).expect(200);
    return parsePrometheusText(res.text);
  };
  const chat = (content: string, extra: object = {}) =>
    chatRequest(t, `metrics-user-${randomUUID()}`, content, extra);

  it('needs the API key when one is set, like /api', async () => {
    const res = await t.api().get('/metrics').expect(401);
    expectEnvelope(res.body, 'missing_api_key');
  });

  it('answers in the Prometheus text format, every sample of a declared family', async () => {
    const res = await t.api().get('/metrics').set(auth).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain;/);
    expect(res.headers['content-type']).toContain('version=0.0.4');
    const exposition = parsePrometheusText(res.text);
    expect(exposition.types.get('pms_http_requests_total')).toBe('counter');
    expect(exposition.types.get('pms_http_request_duration_seconds')).toBe('histogram');
    expect(exposition.types.get('pms_upstream_request_duration_seconds')).toBe('histogram');
    expect(exposition.types.get('pms_db_pool_connections')).toBe('gauge');
    expect(exposition.types.get('process_resident_memory_bytes')).toBe('gauge');
    expect(exposition.samples.length).toBeGreaterThan(50);
  });

  it('counts requests by route pattern and status, never by raw URL', async () => {
    const labels = { method: 'GET', route: '/api/profiles/:id', status: '404' };
    const before = await scrape();
    const ids = [randomUUID(), `someone-${randomUUID()}`];
    for (const id of ids) await t.api().get(`/api/profiles/${id}`).set(auth).expect(404);
    const after = await scrape();

    expect(
      valueOf(after, 'pms_http_requests_total', labels) - valueOf(before, 'pms_http_requests_total', labels),
    ).toBe(2);
    const durations = 'pms_http_request_duration_seconds_count';
    expect(valueOf(after, durations, labels) - valueOf(before, durations, labels)).toBe(2);
    const allLabelValues = after.samples.flatMap((sample) => Object.values(sample.labels)).join('\n');
    for (const id of ids) expect(allLabelValues).not.toContain(id);
    expect(valueOf(after, 'pms_http_requests_total', { route: 'unmatched', status: '404' })).toBe(0);
    await t.api().get(`/no/such/${randomUUID()}`).set(auth).expect(404);
    const unmatched = { route: 'unmatched', status: '404' };
    expect(valueOf(await scrape(), 'pms_http_requests_total', unmatched)).toBe(1);
  });

  it('times upstream calls and reports the injected context of proxied requests', async () => {
    const before = await scrape();
    await chat('I live in Berlin and I love hiking.').expect(200);
    await t.drain();
    const after = await scrape();

    const upstream = { client: 'proxy', status: '200' };
    const upstreamCount = 'pms_upstream_request_duration_seconds_count';
    expect(valueOf(after, upstreamCount, upstream) - valueOf(before, upstreamCount, upstream)).toBe(1);
    const contextCount = 'pms_proxy_injected_context_items_count';
    for (const kind of ['traits', 'memories']) {
      expect(valueOf(after, contextCount, { kind }) - valueOf(before, contextCount, { kind })).toBe(1);
    }
    // the turn was recorded and extracted in the background (heuristic extractor)
    const batches = 'pms_extraction_batches_total';
    expect(
      valueOf(after, batches, { outcome: 'success' }) - valueOf(before, batches, { outcome: 'success' }),
    ).toBe(1);
    expect(
      matching(after, 'pms_extraction_batch_duration_seconds_count', { outcome: 'success' }),
    ).toHaveLength(1);
    expect(valueOf(after, 'pms_extraction_queue_messages')).toBe(0);
    expect(valueOf(after, 'pms_background_tasks')).toBe(0);
    expect(valueOf(after, 'pms_turns_queued')).toBe(0);
  });

  it('counts upstream failures by reason', async () => {
    const errors = 'pms_upstream_errors_total';
    const before = await scrape();
    t.upstream.script({ kind: 'error', status: 503 }, { kind: 'hang' });
    await chat('first').expect(503);
    await chat('second').expect(504);
    const after = await scrape();
    const delta = (reason: string) =>
      valueOf(after, errors, { client: 'proxy', reason }) -
      valueOf(before, errors, { client: 'proxy', reason });
    expect(delta('server_error')).toBe(1);
    expect(delta('timeout')).toBe(1);
    const timeouts = { client: 'proxy', status: 'timeout' };
    expect(valueOf(after, 'pms_upstream_request_duration_seconds_count', timeouts)).toBeGreaterThanOrEqual(1);
  });

  it('reports the database pool', async () => {
    const exposition = await scrape();
    const max = valueOf(exposition, 'pms_db_pool_max_connections');
    expect(max).toBe(process.env.DATABASE_URL ? 10 : 1);
    const open =
      valueOf(exposition, 'pms_db_pool_connections', { state: 'idle' }) +
      valueOf(exposition, 'pms_db_pool_connections', { state: 'active' });
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(max);
    expect(valueOf(exposition, 'pms_db_pool_waiting_requests')).toBe(0);
  });
});
