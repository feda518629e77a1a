import { ContextService } from '../src/context/context.service';
import { HeldContexts } from '../src/context/held-contexts';
import { NamedStatement, PreparedStatements } from '../src/database/prepared-statements';
import { makeMemory, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

/**
 * A context read in flight while its profile is erased (both databases): the read has its rows from
 * before the erasure, and what it would hold must not outlive the erasure in the held-context cache.
 */
describe('An erasure during a context read', () => {
  const t = useTestApp();

  /** The process's held contexts (private to ContextService: nothing else may reach them). */
  const heldContexts = () => t.app.get<ContextService, { held: HeldContexts }>(ContextService).held;

  /**
   * Makes the next held-profile statement wait, once it has its rows, until `release` is called;
   * `read` resolves when it has them.
   */
  function pauseNextHeldRead() {
    const statements = t.app.get(PreparedStatements);
    const query = statements.query.bind(statements);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let readDone!: () => void;
    const read = new Promise<void>((resolve) => (readDone = resolve));
    statements.query = async <T extends object>(statement: NamedStatement): Promise<T[]> => {
      const rows = await query<T>(statement);
      if (!statement.name.startsWith('chat-context-') || !statement.name.includes('-held-')) return rows;
      statements.query = query;
      readDone();
      await released;
      return rows;
    };
    return { read, release, restore: () => (statements.query = query) };
  }

  it('does not hold the erased profile again when the read ends after the erasure', async () => {
    const profile = await makeProfile(t);
    await makeMemory(t, profile.id, { content: 'My passport number is P1234567' });
    expect(heldContexts().size).toBe(0);

    const pause = pauseNextHeldRead();
    try {
      const inFlight = t
        .admin()
        .post(`/api/profiles/${profile.id}/context`)
        .send({ question: 'What is my passport number?' })
        .then((res) => res);
      await pause.read;
      await t.admin().delete(`/api/profiles/${profile.id}`).expect(200);
      pause.release();
      // the read saw the profile before the erasure: it answers from that, and keeps nothing
      expect((await inFlight).status).toBe(200);
      expect(heldContexts().size).toBe(0);
    } finally {
      pause.restore();
    }
  });
});
