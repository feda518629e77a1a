// @database postgres
import { ChildService, emptyServerDatabase } from './support/child-service';
import { HeldBackProxy } from './support/held-back-proxy';
import { parsePrometheusText, valueOf } from './support/prometheus-text';

/** The dedicated change listener's application_name (CHANGE_LISTENER_APPLICATION_NAME). */
const LISTENER = 'profile-memory-service-changes';
const QUESTION = 'What should I know about my documents?';
/** Long, so that only the change feed can end a held copy's use within these tests. */
const TRUST_MS = '60000';

async function call(service: ChildService, method: string, path: string, body?: unknown) {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text.startsWith('{') ? JSON.parse(text) : text;
}

const contextText = async (service: ChildService, profileId: string) =>
  (await call(service, 'POST', `/api/profiles/${profileId}/context`, { question: QUESTION })).text as string;

async function metric(service: ChildService, name: string, labels?: Record<string, string>) {
  return valueOf(parsePrometheusText(await call(service, 'GET', '/metrics')), name, labels);
}

async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) throw new Error(`not seen within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

/**
 * Two service processes on one PostgreSQL: the writer deletes, the reader holds the profile's context
 * and reaches the database through a proxy that can hold back or deafen its change listener. A
 * deletion must leave the reader's injected text within the feed's bound (CHANGE_FEED_BOUND_MS, 1 s),
 * whatever CONTEXT_HELD_TRUST_MS says.
 */
describe('the change feed bound, across replicas', () => {
  let proxy: HeldBackProxy;
  let writer: ChildService;

  beforeAll(async () => {
    await emptyServerDatabase();
    const target = new URL(process.env.DATABASE_URL!);
    proxy = await HeldBackProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    writer = await ChildService.start({ DATABASE_URL: process.env.DATABASE_URL, EXTRACTOR: 'heuristic' });
    await writer.ready();
  });

  // a test that fails midway must not leave the next one's listener held back
  afterEach(() => proxy.reset());

  afterAll(async () => {
    await ChildService.stopAll();
    await proxy.close();
  });

  const startReader = async () => {
    const reader = await ChildService.start({
      DATABASE_URL: proxy.urlFor(process.env.DATABASE_URL!),
      EXTRACTOR: 'heuristic',
      CONTEXT_HELD_TRUST_MS: TRUST_MS,
    });
    await reader.ready();
    return reader;
  };

  async function passportProfile(): Promise<{ profileId: string; memoryId: string }> {
    const profileId = (await call(writer, 'POST', '/api/profiles', { externalId: `feed-${Date.now()}` }))
      .profile.id as string;
    await call(writer, 'POST', `/api/profiles/${profileId}/memories`, {
      content: 'Keeps documents in a blue folder',
      type: 'fact',
    });
    const memory = await call(writer, 'POST', `/api/profiles/${profileId}/memories`, {
      content: 'My passport number is P1234567',
      type: 'fact',
    });
    return { profileId, memoryId: memory.memory.id as string };
  }

  it('stops trusting held copies within the bound when its listener is held back', async () => {
    const reader = await startReader();
    await within(10_000, async () => (await metric(reader, 'pms_profile_changes_live')) === 1);
    const { profileId, memoryId } = await passportProfile();
    // held, then used without asking the database
    await within(5_000, async () => (await contextText(reader, profileId)).includes('P1234567'));
    const trusted = await metric(reader, 'pms_context_standing_total', { result: 'trusted' });
    await contextText(reader, profileId);
    expect(await metric(reader, 'pms_context_standing_total', { result: 'trusted' })).toBe(trusted + 1);

    proxy.holdBack(LISTENER);
    await call(writer, 'DELETE', `/api/profiles/${profileId}/memories/${memoryId}`);
    const gone = await within(
      3_000,
      async () => !(await contextText(reader, profileId)).includes('P1234567'),
    );
    await within(3_000, async () => (await metric(reader, 'pms_profile_changes_live')) === 0);
    console.log(`deleted memory left the held-back replica's context after ${gone} ms`);

    proxy.release(LISTENER);
    await within(10_000, async () => (await metric(reader, 'pms_profile_changes_live')) === 1);
    await reader.stop();
  });

  it('knows it is deaf behind a proxy where LISTEN never delivers, and trusts no held copy', async () => {
    proxy.deafen(LISTENER);
    const reader = await startReader();
    const { profileId, memoryId } = await passportProfile();
    // long enough for a working listener to have heard the profile's creation and to be trusted
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // held, and asked for again: a feed that believed itself live would now use the copy without asking
    for (let i = 0; i < 3; i++) expect(await contextText(reader, profileId)).toContain('P1234567');

    await call(writer, 'DELETE', `/api/profiles/${profileId}/memories/${memoryId}`);
    expect(await contextText(reader, profileId)).not.toContain('P1234567');
    expect(await metric(reader, 'pms_profile_changes_live')).toBe(0);
    expect(await metric(reader, 'pms_context_standing_total', { result: 'trusted' })).toBe(0);
    await reader.stop();
  });
});
