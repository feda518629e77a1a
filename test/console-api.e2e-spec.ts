import { randomUUID } from 'node:crypto';
import { expectEnvelope, makeMemory, makeProfile, putTrait } from './support/factories';
import { useTestApp } from './support/test-app';

interface Turn {
  requestId: string;
  said: string[];
  answer: string;
  model: string;
  createdAt: string;
  injected: { traits: string[]; memories: Array<{ id: string; content: string | null }> } | null;
}

/** What the console reads besides the SPEC's routes: counted profiles, turns with what was injected. */
describe('Console API: counted profiles and recent turns', () => {
  const t = useTestApp({ upstream: 'openai' });

  async function chat(userId: string, content: string, requestId: string): Promise<void> {
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Service-Id': userId, 'X-Request-Id': requestId },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
  }

  it('pages turns newest first with what the user said, the answer and what was injected', async () => {
    const userId = `turns-${randomUUID()}`;
    const profile = await makeProfile(t, userId);
    await putTrait(t, profile.id, 'name', 'Mara');
    const bees = await makeMemory(t, profile.id, { content: 'Keeps bees in the garden', importance: 0.9 });
    for (let i = 1; i <= 5; i++) {
      await chat(userId, `question number ${i} about the bees`, `req-${i}`);
      await t.drain();
    }
    await t.api().delete(`/api/profiles/${profile.id}/memories/${bees.id}`).expect(200);

    const first = await t.api().get(`/api/profiles/${userId}/messages?limit=2`).expect(200);
    expect(first.body.turns.map((turn: Turn) => turn.requestId)).toEqual(['req-5', 'req-4']);
    const [newest] = first.body.turns as Turn[];
    expect(newest).toEqual({
      requestId: 'req-5',
      said: ['question number 5 about the bees'],
      answer: 'echo: question number 5 about the bees',
      model: 'gpt-test',
      createdAt: expect.any(String),
      // the memory was deleted after the turn: its id stays, its content is gone
      injected: { traits: ['name'], memories: [{ id: bees.id, content: null }] },
    });
    expect(first.body.next).toEqual(expect.any(String));

    const second = await t
      .api()
      .get(`/api/profiles/${userId}/messages?limit=2&cursor=${first.body.next}`)
      .expect(200);
    expect(second.body.turns.map((turn: Turn) => turn.requestId)).toEqual(['req-3', 'req-2']);
    const last = await t
      .api()
      .get(`/api/profiles/${userId}/messages?limit=2&cursor=${second.body.next}`)
      .expect(200);
    expect(last.body).toEqual({ turns: [expect.objectContaining({ requestId: 'req-1' })], next: null });
  });

  it('shows turns stored before injections were recorded as not recorded', async () => {
    const profile = await makeProfile(t);
    await t.dataSource.query(
      `INSERT INTO messages (profile_id, role, content, request_id, model, extracted_at)
       VALUES ($1, 'user', 'hello', 'old', 'm', now()), ($1, 'assistant', 'hi', 'old', 'm', now())`,
      [profile.id],
    );
    const res = await t.api().get(`/api/profiles/${profile.id}/messages`).expect(200);
    expect(res.body.turns).toEqual([
      expect.objectContaining({ said: ['hello'], answer: 'hi', injected: null }),
    ]);
  });

  it('refuses a cursor that is not one and answers 404 for an unknown profile', async () => {
    const profile = await makeProfile(t);
    for (const cursor of ['abc', '-1', '1e3', '99999999999999999999']) {
      const res = await t.api().get(`/api/profiles/${profile.id}/messages?cursor=${cursor}`).expect(400);
      expectEnvelope(res.body, 'invalid_cursor');
    }
    expectEnvelope(
      (await t.api().get(`/api/profiles/nobody-${randomUUID()}/messages`).expect(404)).body,
      'profile_not_found',
    );
  });

  it('lists profiles with the counts of what each holds and its learning state', async () => {
    const prefix = `counted-${randomUUID()}`;
    const busy = await makeProfile(t, `${prefix}-busy`);
    await makeProfile(t, `${prefix}-empty`);
    await putTrait(t, busy.id, 'name', 'Ola');
    await makeMemory(t, busy.id);
    await makeMemory(t, busy.id);
    await t.dataSource.query(
      `INSERT INTO messages (profile_id, role, content, request_id, model, extracted_at, extraction_error)
       VALUES ($1, 'user', 'to learn', 'a', 'm', NULL, NULL),
              ($1, 'user', 'given up', 'b', 'm', now(), 'the extractor failed'),
              ($1, 'assistant', 'answer', 'b', 'm', now(), NULL)`,
      [busy.id],
    );
    const res = await t.api().get(`/api/profiles?search=${prefix}`).expect(200);
    expect(res.body.total).toBe(2);
    const counts = Object.fromEntries(
      res.body.profiles.map((p: { externalId: string; counts: unknown }) => [p.externalId, p.counts]),
    );
    expect(counts).toEqual({
      [`${prefix}-busy`]: { traits: 1, memories: 2, messages: 3, pending: 1, failed: 1 },
      [`${prefix}-empty`]: { traits: 0, memories: 0, messages: 0, pending: 0, failed: 0 },
    });
  });

  it('pages memories with offset, in the list order', async () => {
    const profile = await makeProfile(t);
    for (let i = 0; i < 5; i++)
      await makeMemory(t, profile.id, { content: `memory ${i}`, importance: i / 10 });
    const page = async (offset: number) =>
      (
        await t.api().get(`/api/profiles/${profile.id}/memories?limit=2&offset=${offset}`).expect(200)
      ).body.memories.map((m: { content: string }) => m.content);
    expect([...(await page(0)), ...(await page(2)), ...(await page(4))]).toEqual([
      'memory 4',
      'memory 3',
      'memory 2',
      'memory 1',
      'memory 0',
    ]);
    expectEnvelope(
      (await t.api().get(`/api/profiles/${profile.id}/memories?offset=x`).expect(400)).body,
      'invalid_offset',
    );
  });
});
