// @database postgres
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATION_LOCK_KEY } from '../src/database/migrate';
import { MIGRATIONS } from '../src/database/data-source-options';
import { withFreshDatabase } from './support/fresh-database';

const CLI = join(__dirname, '..', 'dist', 'src', 'database', 'migrate-cli.js');

function runCli(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** The built migration command that the Helm chart's Job runs. */
describe('migrate-cli (the Helm migration Job)', () => {
  it('applies every migration once, then finds nothing to do', async () => {
    await withFreshDatabase(async (url) => {
      expect(await runCli({ DATABASE_URL: url })).toEqual({ code: 0, stderr: '' });
      expect((await runCli({ DATABASE_URL: url })).code).toBe(0);
      const client = new Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ runs: number }>('SELECT count(*)::int AS runs FROM migrations');
      await client.end();
      expect(rows[0].runs).toBe(MIGRATIONS.length);
    });
  });

  it('waits on the migration lock that booting replicas take, and says so when it times out', async () => {
    await withFreshDatabase(async (url) => {
      const holder = new Client({ connectionString: url });
      await holder.connect();
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        const { code, stderr } = await runCli({ DATABASE_URL: url, MIGRATION_LOCK_TIMEOUT_MS: '1000' });
        expect(code).toBe(1);
        expect(stderr).toMatch(/^Migrations not applied: .*migration lock for more than 1000 ms/);
        const { rows } = await holder.query(`SELECT to_regclass('migrations') AS table`);
        expect(rows[0].table).toBeNull(); // nothing was applied beside the lock holder
      } finally {
        await holder.end();
      }
    });
  });
});
