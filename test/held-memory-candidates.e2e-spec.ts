import {
  contextStatement,
  ContextStatementRow,
  heldProfileStatement,
} from '../src/context/context-statement';
import type { HeldProfileStatementRow, HeldProfileVersions } from '../src/context/context-statement';
import { HeldMemoryCandidates } from '../src/memories/held-memory-candidates';
import { LINK_PROFILE_LIMIT, LINK_SHARE } from '../src/memories/memory-candidates';
import { makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

const PEOPLE = ['Will', 'Maria', 'Chen', 'the US team', 'IT support', 'Dr. Ödön'];
const THINGS = ['hiking boots', 'jazz records', 'a garden in Lisbon', 'spicy ramen', 'chess openings'];
const VERBS = ['bought', 'talked about', 'loves', 'cooked with', 'organised', 'organizing', 'forgot'];
// products that order differently as reals (PostgreSQL) and as doubles: 0.1 × 0.9 and 0.3 × 0.3
const DECAYS = [0.9, 0.3, 1, 0.45, 0.15];
const LINKED = [
  'Maria adopted a greyhound called Biscotti',
  'Biscotti chewed the sofa cushions',
  'The greyhound rescue is in Zanzibar',
  // superseded (the 154th memory): it counts in how rare "Biscotti" is, but is never a candidate
  'Biscotti used to sleep in a crate',
  'Biscotti won a ribbon in Zanzibar',
];
const EXTRAS = ['', 'again', 'with friends at the weekend', 'quickly', "didn't like it much", 'in 2024'];

/**
 * A small profile's memories are ranked in the process (HeldMemoryCandidates) from what the held
 * statement sends, and must give the candidates the context statement's SQL gives: the same memories,
 * with the same ranks and anchors, and the same standing ones. Times are spread over hours with exact
 * ties, importances and decays tie, lengths differ, some memories are superseded.
 */
describe('Candidates ranked in the process, against the context statement', () => {
  const t = useTestApp();
  let profileId: string;

  beforeAll(async () => {
    profileId = (await makeProfile(t)).id;
    const contents: string[] = [];
    const minutes: number[] = [];
    const importances: number[] = [];
    const decays: number[] = [];
    for (let i = 0; i < 150; i++) {
      contents.push(
        `${PEOPLE[i % PEOPLE.length]} ${VERBS[(i * 5) % VERBS.length]} ${THINGS[(i * 3) % THINGS.length]} on day ${i % 17} ${EXTRAS[(i * 7) % EXTRAS.length]}`.trim(),
      );
      minutes.push((i * 23) % 97);
      importances.push(((i * 3) % 10) / 10);
      decays.push(DECAYS[(i * 7) % DECAYS.length]);
    }
    // rare words ("Biscotti", "greyhound", "Zanzibar") in a few memories each, hours apart: memories
    // linked to the strongest matches by a word, not by time
    LINKED.forEach((content, i) => {
      contents.push(content);
      minutes.push(300 + i * 150);
      importances.push(0.2);
      decays.push(1);
    });
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance, decay_factor, created_at)
       SELECT $1, c, md5(c || n), 'fact', i, d, timestamptz '2026-03-01 12:00:00.123456+00' - m * interval '37 minutes'
       FROM unnest($2::text[], $3::int[], $4::real[], $5::real[]) WITH ORDINALITY AS x (c, m, i, d, n)`,
      [profileId, contents, minutes, importances, decays],
    );
    // every eleventh memory superseded by the first (a superseded memory always names what replaced it)
    await t.dataSource.query(
      `WITH x AS (SELECT md5(c || n) AS hash, n FROM unnest($2::text[]) WITH ORDINALITY AS x (c, n))
       UPDATE memories SET superseded_at = now(),
              superseded_by = (SELECT id FROM memories WHERE profile_id = $1
                               AND content_hash = (SELECT hash FROM x WHERE n = 1))
       WHERE profile_id = $1 AND content_hash IN (SELECT hash FROM x WHERE n % 11 = 0)`,
      [profileId, contents],
    );
  });

  type Candidate = { id: string; rank: string; anchor: string | null };
  const byId = (a: Candidate, b: Candidate) => a.id.localeCompare(b.id);
  const rank = (value: number | string) => Number(value).toFixed(9);

  async function fromStatement(question: string, perSource: number, id = profileId): Promise<Candidate[]> {
    const statement = contextStatement({ id }, question, perSource, null);
    const [row]: ContextStatementRow[] = await t.dataSource.query(statement.text, statement.values);
    const brought = row.memories.map((m) => ({
      id: m.id,
      rank: rank(m.text_rank),
      anchor: m.anchor_id ?? null,
    }));
    const ids = new Set(brought.map((m) => m.id));
    const standing = row
      .standing!.filter((m) => !ids.has(m.id))
      .map((m) => ({ id: m.id, rank: rank(0), anchor: null }));
    return [...brought, ...standing].sort(byId);
  }

  /** The held statement's row for the question, sending what `held` does not hold. */
  async function readHeld(
    id: string,
    question: string,
    held: HeldProfileVersions | null,
  ): Promise<HeldProfileStatementRow> {
    const statement = heldProfileStatement({ id }, question, held);
    const [row]: HeldProfileStatementRow[] = await t.dataSource.query(statement.text, statement.values);
    return row;
  }

  async function inProcess(question: string, perSource: number, id = profileId): Promise<Candidate[]> {
    const row = await readHeld(id, question, null);
    expect(row.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    const held = HeldMemoryCandidates.from(row.memories!)!;
    return held
      .candidates(row.units, perSource)
      .map((m) => ({ id: m.id, rank: rank(m.textRank), anchor: m.anchorId ?? null }))
      .sort(byId);
  }

  it.each([
    ['What did Will buy for the hike?', 50],
    ['Tell me about jazz and chess', 50],
    ['Where is the garden? Lisbon?', 50],
    ['What did the US team organise on day 3?', 50],
    ['Who was organizing things with IT support', 50],
    ['Did Dr. Ödön like the ramen?', 50],
    ['Why didn’t Maria like it?', 50],
    ['something nobody ever said', 50],
    ['?', 50],
    ['What did Chen do in 2024 with friends', 50],
    ['What did Chen do in 2024 with friends', 5],
    ['spicy ramen', 0],
    ['What did Maria adopt?', 50],
    ['What did Maria adopt?', 2],
  ])('gives the same candidates for %j (%i per source)', async (question, perSource) => {
    const expected = await fromStatement(question, perSource);
    const actual = await inProcess(question, perSource);
    expect(actual).toEqual(expected);
    if (perSource > 0) expect(actual.length).toBeGreaterThan(0);
  });

  it('finds the question candidates through words the SQL matched', async () => {
    const actual = await inProcess('What did Will buy for the hike?', 50);
    expect(actual.filter((m) => m.rank !== rank(0) && m.anchor === null).length).toBeGreaterThan(5);
    expect(actual.some((m) => m.anchor !== null)).toBe(true);
  });

  it('brings the memories linked to the strongest matches by a rare word, each with a share of its anchor’s rank', async () => {
    const byContent = async (from: typeof inProcess) => {
      const contents = new Map<string, string>(
        (
          await t.dataSource.query<Array<{ id: string; content: string }>>(
            `SELECT id, content FROM memories WHERE profile_id = $1`,
            [profileId],
          )
        ).map((row) => [row.id, row.content]),
      );
      return (await from('What did Maria adopt?', 50)).map((m) => ({
        ...m,
        content: contents.get(m.id),
        anchor: m.anchor && contents.get(m.anchor),
      }));
    };
    for (const candidates of [await byContent(inProcess), await byContent(fromStatement)]) {
      const anchor = candidates.find((m) => m.content === LINKED[0])!;
      const linked = candidates.filter((m) => m.anchor === LINKED[0]);
      expect(linked.map((m) => m.content).sort()).toEqual([LINKED[1], LINKED[2], LINKED[4]].sort());
      for (const m of linked) expect(m.rank).toBe(rank(Number(anchor.rank) * LINK_SHARE));
    }
  });

  it('links no memories in a profile of LINK_PROFILE_LIMIT memories or more', async () => {
    const linkedIn = async (fillers: number) => {
      const id = (await makeProfile(t)).id;
      await t.dataSource.query(
        `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
         SELECT $1::uuid, c, md5(c), 'fact', 0.5, now() - n * interval '1 day'
         FROM unnest($2::text[]) WITH ORDINALITY AS x (c, n)
         UNION ALL
         SELECT $1::uuid, 'Chen went out on day ' || g, md5('filler' || g), 'fact', 0.5, now() - interval '1 year'
         FROM generate_series(1, $3::int) AS g`,
        [id, [LINKED[0], LINKED[1]], fillers],
      );
      return (await fromStatement('What did Maria adopt?', 50, id)).filter((m) => m.anchor !== null);
    };
    expect(await linkedIn(LINK_PROFILE_LIMIT - 3)).toHaveLength(1);
    expect(await linkedIn(LINK_PROFILE_LIMIT - 2)).toHaveLength(0);
  });

  it('weighs importance by decay as PostgreSQL multiplies reals', async () => {
    // 0.1 × 0.9 is the greater as doubles, 0.3 × 0.3 as reals; the newest memory is unimportant
    const id = (await makeProfile(t)).id;
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance, decay_factor, created_at)
       VALUES ($1, 'first', 'a', 'fact', 0.1, 0.9, now() - interval '2 days'),
              ($1, 'second', 'b', 'fact', 0.3, 0.3, now() - interval '1 day'),
              ($1, 'third', 'c', 'fact', 0, 1, now())`,
      [id],
    );
    const expected = await fromStatement('nothing in common', 1, id);
    expect(expected).toHaveLength(2);
    expect(await inProcess('nothing in common', 1, id)).toEqual(expected);
  });

  it('sends only the memories the caller does not hold, and the copy it updates ranks as a fresh read', async () => {
    const id = (await makeProfile(t)).id;
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
       SELECT $1, 'Will talked about jazz records on day ' || n, md5('held' || n), 'fact', (n % 10) / 10.0,
              now() - n * interval '7 minutes'
       FROM generate_series(1, 20) AS n`,
      [id],
    );
    const read = (held: HeldProfileVersions | null) => readHeld(id, 'What about jazz on day 3?', held);
    const first = await read(null);
    expect(first.memories).toHaveLength(20);
    const held = HeldMemoryCandidates.from(first.memories!)!;
    const holding = (serverStarted = first.server_started!): HeldProfileVersions => ({
      fingerprint: first.fingerprint!,
      memoryVersions: held.versionList,
      serverStarted,
    });
    expect((await read(holding())).memories).toBeNull();

    const [[edited], [removed]] = await Promise.all(
      [0, 1].map((offset) =>
        t.dataSource.query<Array<{ id: string }>>(
          `SELECT id FROM memories WHERE profile_id = $1 ORDER BY created_at DESC OFFSET $2 LIMIT 1`,
          [id, offset],
        ),
      ),
    );
    await t.dataSource.query(
      `UPDATE memories SET content = 'Will sold his jazz records on day 3' WHERE id = $1`,
      [edited.id],
    );
    await t.dataSource.query(`DELETE FROM memories WHERE id = $1`, [removed.id]);
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance)
       VALUES ($1, 'Maria loves jazz on day 3 too', 'held-new', 'fact', 0.9)`,
      [id],
    );

    const changed = await read(holding());
    expect(changed.fingerprint).not.toBe(first.fingerprint);
    expect(changed.memories!.map((m) => m.content).sort()).toEqual([
      'Maria loves jazz on day 3 too',
      'Will sold his jazz records on day 3',
    ]);
    expect(changed.memory_versions!.split(',')).toHaveLength(20);
    const updated = held.updated(changed.memories!, changed.memory_versions!)!;
    const fresh = await read(null);
    expect(fresh.fingerprint).toBe(changed.fingerprint);
    const ranked = (candidates: HeldMemoryCandidates) =>
      candidates
        .candidates(fresh.units, 5)
        .map((m) => ({ id: m.id, content: m.content, rank: rank(m.textRank), anchor: m.anchorId }));
    expect(ranked(updated)).toEqual(ranked(HeldMemoryCandidates.from(fresh.memories!)!));
    expect(ranked(updated).map((m) => m.id)).not.toContain(removed.id);
    expect([...updated.versions].sort()).toEqual(changed.memory_versions!.split(',').sort());

    // versions read under another server start are not trusted: every memory is sent
    expect((await read(holding('2000-01-01 00:00:00+00'))).memories).toHaveLength(20);
  });

  it('takes memories that were only touched into the copy it holds, which then ranks as a fresh read', async () => {
    const id = (await makeProfile(t)).id;
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
       SELECT $1, 'Maria played chess in the park on day ' || n, md5('touched' || n), 'fact', (n % 5) / 5.0,
              now() - n * interval '40 days'
       FROM generate_series(1, 12) AS n`,
      [id],
    );
    const read = (held: HeldProfileVersions | null) => readHeld(id, 'Where did Maria play chess?', held);
    const first = await read(null);
    const held = HeldMemoryCandidates.from(first.memories!)!;
    // "last accessed" as MemoryTouches writes it: a new row version, nothing else changed
    await t.dataSource.query(
      `UPDATE memories SET last_accessed_at = now()
       WHERE id IN (SELECT id FROM memories WHERE profile_id = $1 ORDER BY created_at LIMIT 3)`,
      [id],
    );
    const touched = await read({
      fingerprint: first.fingerprint!,
      memoryVersions: held.versionList,
      serverStarted: first.server_started!,
    });
    expect(touched.memories).toHaveLength(3);
    const updated = held.updated(touched.memories!, touched.memory_versions!)!;
    expect(updated).toBe(held);
    expect([...updated.versions].sort()).toEqual(touched.memory_versions!.split(',').sort());
    const fresh = await read(null);
    const ranked = (candidates: HeldMemoryCandidates) =>
      candidates.candidates(fresh.units, 50).map((m) => ({
        id: m.id,
        rank: rank(m.textRank),
        anchor: m.anchorId,
        lastAccessedAt: m.lastAccessedAt?.getTime() ?? null,
      }));
    expect(ranked(updated)).toEqual(ranked(HeldMemoryCandidates.from(fresh.memories!)!));
    expect(ranked(updated).filter((m) => m.lastAccessedAt !== null)).toHaveLength(3);
  });
});
