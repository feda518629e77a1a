import { randomUUID } from 'node:crypto';
import { TestApp } from './test-app';

export interface ProfileBody {
  id: string;
  externalId: string | null;
  summary: string;
  summaryVersion: number;
  summaryUpdatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export async function makeProfile(t: TestApp, externalId = `user-${randomUUID()}`): Promise<ProfileBody> {
  const res = await t.admin().post('/api/profiles').send({ externalId }).expect(201);
  return res.body.profile as ProfileBody;
}

export async function makeMemory(
  t: TestApp,
  profileId: string,
  memory: { content?: string; type?: string; importance?: number } = {},
): Promise<{ id: string; content: string; importance: number; createdAt: string }> {
  const res = await t
    .admin()
    .post(`/api/profiles/${profileId}/memories`)
    .send({ content: memory.content ?? `memory ${randomUUID()}`, type: memory.type ?? 'fact', ...memory })
    .expect(201);
  return res.body.memory as { id: string; content: string; importance: number; createdAt: string };
}

export async function putTrait(
  t: TestApp,
  profileId: string,
  key: string,
  value: unknown,
  confidence?: number,
) {
  const res = await t
    .admin()
    .put(`/api/profiles/${profileId}/traits/${key}`)
    .send(confidence === undefined ? { value } : { value, confidence })
    .expect(200);
  return res.body.trait as { key: string; value: unknown; createdAt: string; updatedAt: string };
}

/**
 * A profile with these traits (key to value) and memories, and a summary written by hand when one is
 * given (learning then makes no summary call to an LLM).
 */
export async function makeProfileWith(
  t: TestApp,
  content: {
    externalId?: string;
    summary?: string;
    traits?: Record<string, unknown>;
    memories?: Array<{ content?: string; type?: string; importance?: number }>;
  },
) {
  const profile = await makeProfile(t, content.externalId);
  if (content.summary !== undefined) {
    await t.admin().patch(`/api/profiles/${profile.id}`).send({ summary: content.summary }).expect(200);
  }
  for (const [key, value] of Object.entries(content.traits ?? {})) await putTrait(t, profile.id, key, value);
  const memories = [];
  for (const memory of content.memories ?? []) memories.push(await makeMemory(t, profile.id, memory));
  return { profile, memories };
}

/** A profile's memories (`query`: e.g. `?include=superseded`) and traits, as the API lists them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function listMemories(t: TestApp, profileId: string, query = ''): Promise<any[]> {
  return (await t.admin().get(`/api/profiles/${profileId}/memories${query}`).expect(200)).body.memories;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function listTraits(t: TestApp, profileId: string): Promise<any[]> {
  return (await t.admin().get(`/api/profiles/${profileId}/traits`).expect(200)).body.traits;
}

/** Learns from `data` through the ingest route (200). */
export function ingestText(t: TestApp, profileId: string, data: string) {
  return t.admin().post(`/api/profiles/${profileId}/ingest`).send({ data }).expect(200);
}

/** Stores conversation messages directly: the proxy is the only API that writes them. */
export async function insertMessages(t: TestApp, profileId: string, contents: string[]): Promise<void> {
  for (const [index, content] of contents.entries()) {
    await t.dataSource.query(`INSERT INTO messages (profile_id, role, content) VALUES ($1, $2, $3)`, [
      profileId,
      index % 2 === 0 ? 'user' : 'assistant',
      content,
    ]);
  }
}

export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the error envelope and returns it. */
export function expectEnvelope(
  body: unknown,
  code: string,
): { message: string; type: string; code: string; param?: string } {
  const error = (body as { error?: { message: string; type: string; code: string; param?: string } }).error;
  expect(error).toBeDefined();
  expect(error!.code).toBe(code);
  expect(typeof error!.message).toBe('string');
  expect(typeof error!.type).toBe('string');
  expect(Object.keys(body as object)).toEqual(['error']);
  return error!;
}

/**
 * Asks one question through the proxy (debug, no extraction), waits for the background work, and
 * returns the ids of the memories it injected, in rank order.
 */
export async function askForInjectedIds(t: TestApp, userId: string, question: string): Promise<string[]> {
  const res = await t
    .api()
    .post('/v1/chat/completions')
    .set('X-Service-Id', userId)
    .send({
      model: 'm',
      messages: [{ role: 'user', content: question }],
      service: { debug: true, skipExtraction: true },
    })
    .expect(200);
  await t.drain();
  const ids = /memories=([^;]*)/.exec(String(res.headers['x-service-context-ids']))![1];
  return ids ? ids.split(',') : [];
}
