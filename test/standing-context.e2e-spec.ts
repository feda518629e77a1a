import { ContextService } from '../src/context/context.service';
import { HeldContexts, WholeProfile } from '../src/context/held-contexts';
import { heldProfileStatement } from '../src/context/context-statement';
import { HeldMemoryCandidates } from '../src/memories/held-memory-candidates';
import { PreparedStatements } from '../src/database/prepared-statements';
import type { HeldProfileStatementRow } from '../src/context/context-statement';
import { askForInjectedIds, makeMemory, makeProfile, putTrait } from './support/factories';
import { useTestApp } from './support/test-app';
import { DEFAULT_APPLICATION_ID } from '../src/database/migrations/1766000000000-applications-keys-audit';
import { injectedSystem } from './support/clients';

/**
 * The standing part of a context (summary, traits, most important and most recent memories) is kept
 * between requests and not sent again while the database's fingerprint of it holds. Every change to it,
 * through the API or straight in the database as another replica would make it, shows in the very next
 * context. The app here confirms every held copy with the database (CONTEXT_HELD_TRUST_MS=0), so each
 * chat runs the statement; using a copy without asking is test/profile-changes.e2e-spec.ts's.
 */
describe('The standing part of a context, held between requests', () => {
  const t = useTestApp({ upstream: 'openai', env: { CONTEXT_HELD_TRUST_MS: '0' } });
  let rows: HeldProfileStatementRow[];
  let names: string[];

  beforeAll(() => {
    const statements = t.app.get(PreparedStatements);
    const query = statements.query.bind(statements);
    jest.spyOn(statements, 'query').mockImplementation(async (statement) => {
      const result = await query(statement);
      if (statement.name.startsWith('chat-context')) {
        names.push(statement.name);
        rows.push(...(result as HeldProfileStatementRow[]));
      }
      return result;
    });
  });

  beforeEach(() => {
    rows = [];
    names = [];
  });

  /** The system message the upstream got for this user's question. */
  async function injected(userId: string, question = 'What do you know about me?'): Promise<string> {
    await askForInjectedIds(t, userId, question);
    return injectedSystem(t.upstream);
  }

  async function userWithMemories(userId: string) {
    const profile = await makeProfile(t, userId);
    await putTrait(t, profile.id, 'preferred_language', 'Python');
    const memories = [];
    for (const content of ['Has a dog called Pixel', 'Lives in Lisbon', 'Is allergic to peanuts'])
      memories.push(await makeMemory(t, profile.id, { content, importance: 0.5 }));
    return { profile, memories };
  }

  it('is sent once, then only its fingerprint, while nothing changes', async () => {
    await userWithMemories('standing-steady');
    // the first chat marks the injected memories as used (last_accessed_at): a change of them
    expect(await injected('standing-steady')).toContain('Pixel');
    await injected('standing-steady');
    const held = await injected('standing-steady', 'Anything about pets?');
    expect(held).toContain('Pixel');
    expect(held).toContain('Python');
    const [first, second, third] = rows;
    expect(first.memories).toHaveLength(3);
    expect(first.traits).toEqual([{ key: 'preferred_language', value: 'Python' }]);
    expect(second.memories).toHaveLength(3);
    expect(third.fingerprint).toBe(second.fingerprint);
    expect(third.memories).toBeNull();
    expect(third.traits).toBeNull();
    expect(third.summary).toBeNull();

    const metrics = (await t.api().get('/metrics').expect(200)).text;
    const count = (result: string) =>
      Number(
        new RegExp(`^pms_context_standing_total\\{result="${result}"\\} (\\d+)`, 'm').exec(metrics)?.[1],
      );
    expect(count('held')).toBeGreaterThanOrEqual(1);
    expect(count('sent')).toBeGreaterThanOrEqual(2);
  });

  it('shows changes made through the API in the next context', async () => {
    const { profile, memories } = await userWithMemories('standing-api');
    expect(await injected('standing-api')).toContain('Python');

    await putTrait(t, profile.id, 'preferred_language', 'Rust');
    expect(await injected('standing-api')).toContain('Rust');

    await makeMemory(t, profile.id, { content: 'Plays the cello on Sundays' });
    expect(await injected('standing-api')).toContain('cello');

    await t.admin().delete(`/api/profiles/${profile.id}/memories/${memories[0].id}`).expect(200);
    expect(await injected('standing-api')).not.toContain('Pixel');

    await t
      .admin()
      .patch(`/api/profiles/${profile.id}`)
      .send({ summary: 'A cellist in Lisbon.' })
      .expect(200);
    expect(await injected('standing-api')).toContain('A cellist in Lisbon.');
  });

  it('shows changes another replica wrote straight to the database in the next context', async () => {
    const { profile, memories } = await userWithMemories('standing-replica');
    expect(await injected('standing-replica')).toContain('peanuts');

    await t.dataSource.query(`UPDATE memories SET content = 'Is allergic to shellfish' WHERE id = $1`, [
      memories[2].id,
    ]);
    const edited = await injected('standing-replica');
    expect(edited).toContain('shellfish');
    expect(edited).not.toContain('peanuts');

    await t.dataSource.query(`UPDATE memories SET superseded_at = now(), superseded_by = $2 WHERE id = $1`, [
      memories[1].id,
      memories[0].id,
    ]);
    expect(await injected('standing-replica')).not.toContain('Lisbon');

    await t.dataSource.query(`DELETE FROM traits WHERE profile_id = $1`, [profile.id]);
    expect(await injected('standing-replica')).not.toContain('Python');

    await t.dataSource.query(`UPDATE profiles SET summary = 'Summary written elsewhere.' WHERE id = $1`, [
      profile.id,
    ]);
    expect(await injected('standing-replica')).toContain('Summary written elsewhere.');
  });

  /**
   * A user whose profile this process holds (two chats), then whose first memory another replica edits
   * (after `meanwhile`); `rows` starts empty.
   */
  async function heldThenEdited(
    userId: string,
    meanwhile: (made: Awaited<ReturnType<typeof userWithMemories>>) => Promise<void> = () =>
      Promise.resolve(),
  ) {
    const made = await userWithMemories(userId);
    await injected(userId); // its memories are marked as used: each row changes once
    await injected(userId);
    await meanwhile(made);
    await t.dataSource.query(`UPDATE memories SET content = 'Has a cat called Pixel' WHERE id = $1`, [
      made.memories[0].id,
    ]);
    rows = [];
    return made;
  }

  it('sends again only the memories that changed, and builds the context a fresh read builds', async () => {
    const { memories } = await heldThenEdited('standing-delta');
    const updated = await injected('standing-delta');
    expect(updated).toContain('cat called Pixel');
    expect(updated).toContain('peanuts');
    expect(rows).toHaveLength(1);
    expect(rows[0].memories!.map((memory) => memory.id)).toEqual([memories[0].id]);
    expect(rows[0].memory_versions!.split(',')).toHaveLength(3);

    const context: unknown = t.app.get(ContextService);
    (context as { held: HeldContexts }).held.forgetProfile(rows[0].id);
    rows = [];
    expect(await injected('standing-delta')).toBe(updated);
    expect(rows[0].memories).toHaveLength(3);
  });

  it('reads the profile whole when the held copy and the database disagree on what it holds', async () => {
    await heldThenEdited('standing-disagree', async ({ memories }) => {
      const context: unknown = t.app.get(ContextService);
      const entry = (context as { held: HeldContexts }).held.get(
        `user:${DEFAULT_APPLICATION_ID}:standing-disagree`,
      ) as WholeProfile;
      // a copy out of step: it names every memory's version but has lost one of them
      const statement = heldProfileStatement(
        { applicationId: DEFAULT_APPLICATION_ID, externalId: 'standing-disagree' },
        'anything',
        null,
      );
      const [whole]: HeldProfileStatementRow[] = await t.dataSource.query(statement.text, statement.values);
      const kept = HeldMemoryCandidates.from(whole.memories!.filter((m) => m.id !== memories[2].id))!;
      Object.defineProperty(kept, 'versions', { value: entry.memories.versions });
      entry.memories = kept;
    });
    const text = await injected('standing-disagree');
    expect(text).toContain('cat called Pixel');
    expect(text).toContain('peanuts');
    expect(rows).toHaveLength(2); // the changed row, then the profile whole
    expect(rows[1].memories).toHaveLength(3);
  });

  it('forgets an erased profile: its held part is dropped, and a new one with the same user id starts empty', async () => {
    const { profile } = await userWithMemories('standing-erased');
    expect(await injected('standing-erased')).toContain('Pixel');
    const context: unknown = t.app.get(ContextService);
    const held = (context as { held: HeldContexts }).held;
    const before = held.size;
    await t.admin().delete(`/api/profiles/${profile.id}`).expect(200);
    expect(held.size).toBeLessThan(before);
    expect(await injected('standing-erased')).not.toContain('Pixel');
  });

  it('ranks a profile of 200 memories or more in the database, and holds it whole again once it shrank', async () => {
    const profile = await makeProfile(t, 'standing-large');
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance)
       SELECT $1, 'Filler memory number ' || n, 'h' || n, 'fact', 0.1 FROM generate_series(1, 205) AS n`,
      [profile.id],
    );
    await makeMemory(t, profile.id, { content: 'Keeps a tortoise called Zeno', importance: 0.1 });
    const question = 'What is the name of my tortoise?';
    const kinds = () => names.map((name) => (name.includes('-held-') ? 'held' : 'ranked'));

    expect(await injected('standing-large', question)).toContain('Zeno');
    expect(kinds()).toEqual(['held', 'ranked']);
    expect(rows[0].fingerprint).toBeNull();
    names = [];
    expect(await injected('standing-large', question)).toContain('Zeno');
    expect(kinds()).toEqual(['ranked']);

    await t.dataSource.query(
      `DELETE FROM memories WHERE profile_id = $1 AND content LIKE 'Filler memory number 1%'`,
      [profile.id],
    );
    names = [];
    expect(await injected('standing-large', question)).toContain('Zeno');
    expect(kinds()).toEqual(['ranked']);
    names = [];
    expect(await injected('standing-large', question)).toContain('Zeno');
    expect(kinds()).toEqual(['held']);
  });
});
