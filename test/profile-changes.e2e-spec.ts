import { Client } from 'pg';
import { ContextService } from '../src/context/context.service';
import { CHANGE_LISTENER_APPLICATION_NAME, ProfileChangeFeed } from '../src/database/profile-changes';
import { TOUCH_ONLY_SETTING } from '../src/database/profile-changes-channel';
import { MemoryTouches } from '../src/memories/memory-touches';
import { makeMemory, makeProfile } from './support/factories';
import { parsePrometheusText, valueOf } from './support/prometheus-text';
import { startTestApp, TestApp, useTestApp } from './support/test-app';
import { describeOn } from './support/databases';

const QUESTION = 'What should I cook tonight?';

async function standing(t: TestApp): Promise<Record<'held' | 'trusted' | 'sent', number>> {
  const exposition = parsePrometheusText((await t.api().get('/metrics').expect(200)).text);
  const count = (result: string) => valueOf(exposition, 'pms_context_standing_total', { result });
  return { held: count('held'), trusted: count('trusted'), sent: count('sent') };
}

async function gauge(t: TestApp, name: string): Promise<number> {
  return valueOf(parsePrometheusText((await t.api().get('/metrics').expect(200)).text), name);
}

async function contextText(t: TestApp, profileId: string): Promise<string> {
  const res = await t
    .api()
    .post(`/api/profiles/${profileId}/context`)
    .send({ question: QUESTION })
    .expect(200);
  return res.body.text as string;
}

async function eventually(check: () => boolean | Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 3_000) throw new Error('not seen within 3 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - started;
}

/** A small profile with a trait and memories about cooking. */
async function cookingProfile(t: TestApp): Promise<string> {
  const profileId = (await makeProfile(t)).id;
  await t.admin().put(`/api/profiles/${profileId}/traits/diet`).send({ value: 'vegetarian' }).expect(200);
  for (const content of ['Likes to cook Thai curry', 'Cooks pasta on Fridays', 'Owns a wok']) {
    await makeMemory(t, profileId, { content });
  }
  return profileId;
}

/**
 * A held small profile is used without asking the database while the database notified no change
 * of it (ProfileChangeFeed), and never once a change is notified: this process's own writes are
 * known before they return, whatever wrote them.
 */
describe('Held contexts and the profile change feed', () => {
  const t = useTestApp();

  it('builds the context without the database once it was confirmed, with the same text', async () => {
    await eventually(async () => (await gauge(t, 'pms_profile_changes_live')) === 1);
    const profileId = await cookingProfile(t);
    const first = await contextText(t, profileId);
    const before = await standing(t);
    expect(await contextText(t, profileId)).toBe(first);
    expect(await contextText(t, profileId)).toBe(first);
    const after = await standing(t);
    expect(after.trusted - before.trusted).toBe(2);
    expect(after.held + after.sent).toBe(before.held + before.sent);
  });

  it('shows the extractor the memories as the database has them, never a held copy unasked', async () => {
    const profileId = await cookingProfile(t);
    await contextText(t, profileId);
    await contextText(t, profileId);
    const before = await standing(t);
    const related = await t.app.get(ContextService).relatedMemories(profileId, QUESTION, 5);
    expect(related.map((memory) => memory.content)).toContain('Likes to cook Thai curry');
    const after = await standing(t);
    expect(after.trusted).toBe(before.trusted);
    expect(after.held).toBe(before.held + 1);
  });

  it("sees each of this process's writes in the very next context, through the API or a statement", async () => {
    const profileId = await cookingProfile(t);
    for (let i = 0; i < 15; i++) {
      await t
        .admin()
        .put(`/api/profiles/${profileId}/traits/diet`)
        .send({ value: `diet-${i}` })
        .expect(200);
      expect(await contextText(t, profileId)).toContain(`diet-${i}`);
      await contextText(t, profileId); // held again
      // known when the statement returns, not a moment later
      const feed = t.app.get(ProfileChangeFeed);
      const token = feed.token()!;
      expect(feed.unchangedSince(profileId, token)).toBe(true);
      await t.dataSource.query(
        `UPDATE traits SET value = to_jsonb($2::text) WHERE profile_id = $1 AND key = 'diet'`,
        [profileId, `by-hand-${i}`],
      );
      expect(feed.unchangedSince(profileId, token)).toBe(false);
      expect(await contextText(t, profileId)).toContain(`by-hand-${i}`);
      await contextText(t, profileId);
      const memory = await makeMemory(t, profileId, { content: `Cooked dish number ${i} tonight` });
      expect(await contextText(t, profileId)).toContain(memory.content);
    }
  });

  it('hears which profiles a statement changed, and one notice for all when it changed many', async () => {
    const feed = t.app.get(ProfileChangeFeed);
    const [changed, untouched] = [await cookingProfile(t), await cookingProfile(t)];
    let token = feed.token()!;
    await t.dataSource.query(`UPDATE memories SET importance = 0.9 WHERE profile_id = $1`, [changed]);
    expect(feed.unchangedSince(changed, token)).toBe(false);
    expect(feed.unchangedSince(untouched, token)).toBe(true);
    token = feed.token()!;
    await t.dataSource.query(
      `INSERT INTO profiles (external_id) SELECT 'bulk-' || g FROM generate_series(1, 1001) AS g`,
    );
    expect(feed.unchangedSince(untouched, token)).toBe(false);
  });

  it('hears nothing of memories marked used, and the next change in the same transaction as usual', async () => {
    const feed = t.app.get(ProfileChangeFeed);
    const profileId = await cookingProfile(t);
    const [{ id }] = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM memories WHERE profile_id = $1 LIMIT 1`,
      [profileId],
    );
    const token = feed.token()!;
    const touches = t.app.get(MemoryTouches);
    touches.touch([id]);
    await touches.flush();
    const [{ used }] = await t.dataSource.query<Array<{ used: boolean }>>(
      `SELECT last_accessed_at IS NOT NULL AS used FROM memories WHERE id = $1`,
      [id],
    );
    expect(used).toBe(true);
    expect(feed.unchangedSince(profileId, token)).toBe(true);
    // the setting silences the one statement that follows it, not the rest of its transaction
    await t.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT set_config($1, 'on', true)`, [TOUCH_ONLY_SETTING]);
      await manager.query(`UPDATE memories SET last_accessed_at = now() WHERE id = $1`, [id]);
      await manager.query(`UPDATE memories SET importance = 0.8 WHERE id = $1`, [id]);
    });
    expect(feed.unchangedSince(profileId, token)).toBe(false);
  });

  it('asks the database every time with CONTEXT_HELD_TRUST_MS=0', async () => {
    const strict = await startTestApp({ CONTEXT_HELD_TRUST_MS: '0', DATABASE_URL: process.env.DATABASE_URL });
    try {
      const profileId = await cookingProfile(strict);
      for (let i = 0; i < 3; i++) await contextText(strict, profileId);
      const counted = await standing(strict);
      expect(counted.trusted).toBe(0);
      expect(counted.held).toBe(2);
    } finally {
      await strict.close();
    }
  });
});

/** Replicas on one server hear each other's changes; a replica that cannot hear them asks the database. */
describeOn('postgres', 'Held contexts across replicas', () => {
  // the second replica does not empty the tables the first one has started on
  const env = { DATABASE_URL: process.env.DATABASE_URL };
  const writer = useTestApp({ env });
  const reader = useTestApp({ env });
  let outside: Client;

  beforeAll(async () => {
    outside = new Client({ connectionString: process.env.DATABASE_URL });
    await outside.connect();
  });

  afterAll(async () => {
    await outside.end();
  });

  /** Waits until the replica's feed is live and has heard every change committed before this call. */
  async function caughtUp(replica: TestApp): Promise<void> {
    const feed = replica.app.get(ProfileChangeFeed);
    await eventually(() => feed.isLive);
    const sentinel = await cookingProfile(writer);
    const token = feed.token()!;
    // notifications reach a session in commit order: once this one is heard, every earlier one was
    await outside.query(`UPDATE memories SET importance = 0.5 WHERE profile_id = $1`, [sentinel]);
    await eventually(() => !feed.unchangedSince(sentinel, token));
  }

  it('drops a held context when another replica, or a statement from outside, changes the profile', async () => {
    const profileId = await cookingProfile(writer);
    // the writer's changes may reach the reader after its first read, which then rightly holds nothing
    await caughtUp(reader);
    await contextText(reader, profileId);
    const before = await standing(reader);
    await contextText(reader, profileId);
    expect((await standing(reader)).trusted).toBe(before.trusted + 1);

    await writer
      .admin()
      .put(`/api/profiles/${profileId}/traits/diet`)
      .send({ value: 'pescatarian' })
      .expect(200);
    await eventually(async () => (await contextText(reader, profileId)).includes('pescatarian'));

    await contextText(reader, profileId);
    await outside.query(`UPDATE traits SET value = '"vegan"' WHERE profile_id = $1 AND key = 'diet'`, [
      profileId,
    ]);
    await eventually(async () => (await contextText(reader, profileId)).includes('vegan'));
  });

  it("counts a replica's own write once: a copy heard later on another connection does not void a read that saw it", async () => {
    const feed = writer.app.get(ProfileChangeFeed);
    const [own, theirs] = [await cookingProfile(writer), await cookingProfile(writer)];
    await eventually(() => feed.isLive);
    for (let i = 0; i < 10; i++) {
      // several pooled connections, each listening, are open while the statement commits
      await Promise.all(Array.from({ length: 4 }, () => writer.dataSource.query(`SELECT pg_sleep(0.01)`)));
      await writer.dataSource.query(`UPDATE memories SET importance = 0.5 WHERE profile_id = $1`, [own]);
      const token = feed.token()!;
      // notifications reach each session in commit order: once the listener heard this one, it heard the write's
      await outside.query(`UPDATE memories SET importance = 0.5 WHERE profile_id = $1`, [theirs]);
      await eventually(() => !feed.unchangedSince(theirs, token));
      expect(feed.unchangedSince(own, token)).toBe(true);
    }
  });

  it('voids every earlier moment when one of its pooled connections is cut (a commit it made may go unheard)', async () => {
    const feed = writer.app.get(ProfileChangeFeed);
    await eventually(() => feed.isLive);
    const [{ pid }] = await writer.dataSource.query<Array<{ pid: number }>>(`SELECT pg_backend_pid() AS pid`);
    const token = feed.token()!;
    await outside.query(`SELECT pg_terminate_backend($1)`, [pid]);
    await eventually(() => !feed.unchangedSince('any profile', token));
    // the pool opens a new connection for the next statement
    await writer.dataSource.query(`SELECT 1`);
  });

  it('confirms every held context with the database while its change listener is down, and trusts again once it is back', async () => {
    const profileId = await cookingProfile(writer);
    await contextText(reader, profileId);
    // every replica's listener is cut; each reconnects within about a second
    const { rows } = await outside.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE application_name = $1 AND datname = current_database()`,
      [CHANGE_LISTENER_APPLICATION_NAME],
    );
    expect(rows[0].n).toBe(2);
    // the replica notices at once: its contexts are confirmed, none is trusted
    await eventually(async () => (await gauge(reader, 'pms_profile_changes_live')) === 0);
    const before = await standing(reader);
    await outside.query(`UPDATE traits SET value = '"raw food"' WHERE profile_id = $1 AND key = 'diet'`, [
      profileId,
    ]);
    expect(await contextText(reader, profileId)).toContain('raw food');
    await contextText(reader, profileId);
    const during = await standing(reader);
    expect(during.trusted).toBe(before.trusted);
    expect(during.held + during.sent).toBe(before.held + before.sent + 2);
    // back within seconds: confirmed once, then trusted
    await eventually(async () => (await gauge(reader, 'pms_profile_changes_live')) === 1);
    expect(await gauge(reader, 'pms_notify_queue_usage')).toBeGreaterThanOrEqual(0);
    await eventually(async () => {
      await contextText(reader, profileId);
      return (await standing(reader)).trusted > during.trusted;
    });
  });
});
