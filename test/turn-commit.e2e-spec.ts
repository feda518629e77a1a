import { chatRequest } from './support/clients';
import { SuiteApp, useTestApp } from './support/test-app';

/**
 * A turn's commit: the answer waits for it, and by default not also for the disk's flush
 * (synchronous_commit off for that transaction; TURN_COMMIT_FLUSH=true keeps the server's setting). A
 * statement trigger on messages records the setting the turn's transaction commits with.
 */
describe('Turn commit', () => {
  async function settingOfTurnCommit(t: SuiteApp<'openai'>): Promise<string[]> {
    await t.dataSource.query(`CREATE TABLE IF NOT EXISTS test_commit_modes (mode text NOT NULL)`);
    await t.dataSource.query(`TRUNCATE test_commit_modes`);
    await t.dataSource.query(`
      CREATE OR REPLACE FUNCTION test_record_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_commit_modes (mode) VALUES (current_setting('synchronous_commit'));
        RETURN NULL;
      END $$`);
    await t.dataSource.query(`DROP TRIGGER IF EXISTS test_commit_mode ON messages`);
    await t.dataSource.query(`
      CREATE TRIGGER test_commit_mode AFTER INSERT ON messages
      FOR EACH STATEMENT EXECUTE FUNCTION test_record_commit_mode()`);
    try {
      await chatRequest(t, 'commit-user', 'Hello there').expect(200);
      await t.drain();
      const stored = await t.dataSource.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM messages m JOIN profiles p ON p.id = m.profile_id
         WHERE p.external_id = 'commit-user'`,
      );
      expect(stored[0].n).toBe(2);
      const modes = await t.dataSource.query<Array<{ mode: string }>>(`SELECT mode FROM test_commit_modes`);
      return modes.map((row) => row.mode);
    } finally {
      await t.dataSource.query(`DROP TRIGGER IF EXISTS test_commit_mode ON messages`);
    }
  }

  describe('by default', () => {
    const t = useTestApp({ upstream: 'openai' });

    it('commits a turn without waiting for the flush', async () => {
      expect(await settingOfTurnCommit(t)).toEqual(['off']);
    });
  });

  describe('with TURN_COMMIT_FLUSH on', () => {
    const t = useTestApp({ upstream: 'openai', env: { TURN_COMMIT_FLUSH: 'true' } });

    it("commits with the server's synchronous_commit", async () => {
      expect(await settingOfTurnCommit(t)).toEqual(['on']);
    });
  });
});
