// @database embedded
import { makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

interface TableState {
  rows: number;
  dead: number;
  modified: number;
}

/**
 * PGlite has no autovacuum: the service analyzes and vacuums the embedded database's tables itself, so
 * that the planner knows their sizes and deleted rows are reclaimed. A server's own autovacuum does that
 * there (not tested: it is PostgreSQL's).
 */
describe('embedded database table upkeep', () => {
  const t = useTestApp({ env: { DB_MAINTENANCE_INTERVAL_MS: '1000' } });

  async function memoriesTable(): Promise<TableState> {
    const [row] = await t.dataSource.query(
      `SELECT c.reltuples::float8 AS rows, s.n_dead_tup AS dead, s.n_mod_since_analyze AS modified
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'memories'`,
    );
    return { rows: Number(row.rows), dead: Number(row.dead), modified: Number(row.modified) };
  }

  async function eventually(check: (state: TableState) => boolean): Promise<TableState> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const state = await memoriesTable();
      if (check(state) || Date.now() > deadline) return state;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('analyzes a table that grew, and vacuums the rows a deletion left', async () => {
    const profile = await makeProfile(t);
    const written = 150;
    // written in one statement: an upkeep run in the middle of slower writes would analyze a table
    // that then grows by less than autovacuum's threshold, and rightly leave it
    await t.dataSource.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance)
       SELECT $1, 'fact number ' || i, md5('fact number ' || i), 'fact', 0.5 FROM generate_series(1, $2) AS i`,
      [profile.id, written],
    );

    const analyzed = await eventually((state) => state.rows >= written && state.modified === 0);
    expect(analyzed.rows).toBeGreaterThanOrEqual(written);
    expect(analyzed.modified).toBe(0);

    await t.admin().delete(`/api/profiles/${profile.id}`).expect(200);
    const vacuumed = await eventually((state) => state.dead === 0 && state.rows < written);
    expect(vacuumed.dead).toBe(0);
    expect(vacuumed.rows).toBeLessThan(written);
  });
});
