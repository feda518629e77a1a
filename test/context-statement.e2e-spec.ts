import { contextStatement, ContextStatementRow } from '../src/context/context-statement';
import { makeMemory, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

const PEOPLE = ['Will', 'Maria', 'Chen', 'the US team', 'IT support'];
const THINGS = ['hiking boots', 'jazz records', 'a garden in Lisbon', 'spicy ramen', 'chess openings'];
const VERBS = ['bought', 'talked about', 'loves', 'cooked with', 'organised', 'forgot'];

/**
 * The context statement counts and matches a small profile's words in one pass over its memories, and a
 * large profile's through the (profile_id, search_vector) index. Both ways must find the same
 * candidates with the same ranks: here the same profile is read both ways.
 */
describe('The context statement, small and large profile paths', () => {
  const t = useTestApp();
  let profileId: string;

  beforeAll(async () => {
    profileId = (await makeProfile(t)).id;
    let current: string | null = null;
    for (let i = 0; i < 120; i++) {
      const content = `${PEOPLE[i % PEOPLE.length]} ${VERBS[(i * 7) % VERBS.length]} ${THINGS[(i * 3) % THINGS.length]} on day ${i % 17}`;
      const memory = await makeMemory(t, profileId, { content, importance: (i % 10) / 10 });
      if (i % 11 === 0 && current !== null) {
        // a superseded memory always names what replaced it
        await t.dataSource.query(
          `UPDATE memories SET superseded_at = now(), superseded_by = $2 WHERE id = $1`,
          [memory.id, current],
        );
      } else {
        current = memory.id;
      }
    }
  });

  async function candidates(question: string, wordScanLimit: number) {
    const statement = contextStatement({ id: profileId }, question, 50, null, '', wordScanLimit);
    const [row]: ContextStatementRow[] = await t.dataSource.query(statement.text, statement.values);
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    return {
      question: row.memories
        .map((m) => ({ id: m.id, rank: Number(Number(m.text_rank).toFixed(9)), anchor: m.anchor_id }))
        .sort(byId),
      standing: row.standing!.map((m) => m.id).sort(),
    };
  }

  it.each([
    'What did Will buy for the hike?',
    'Tell me about jazz and chess',
    'Where is the garden? Lisbon?',
    'What did the US team organise on day 3?',
    'Who cooked spicy ramen with IT support',
    'something nobody ever said',
    'day',
    '?',
  ])('finds the same candidates both ways for %j', async (question) => {
    const small = await candidates(question, 10_000);
    const large = await candidates(question, 1);
    expect(small).toEqual(large);
    if (question.includes('Will')) expect(small.question.length).toBeGreaterThan(0);
  });
});

describe('The context statement on the main connection', () => {
  const t = useTestApp();

  it('leaves the session plan mode as it was (PGlite forces generic plans around it only)', async () => {
    const profile = await makeProfile(t);
    await makeMemory(t, profile.id, { content: 'Likes long walks' });
    await t.admin().post(`/api/profiles/${profile.id}/context`).send({ question: 'walks?' }).expect(200);
    const [{ plan_cache_mode: mode }] = await t.dataSource.query('SHOW plan_cache_mode');
    expect(mode).toBe('auto');
  });
});
