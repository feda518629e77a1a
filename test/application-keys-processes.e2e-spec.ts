// @database postgres
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, MIGRATIONS } from '../src/database/data-source-options';
import { DEFAULT_APPLICATION_ID } from '../src/database/migrations/1766000000000-applications-keys-audit';
import { ChildService } from './support/child-service';
import { withFreshDatabase } from './support/fresh-database';

const KEYS_CLI = join(__dirname, '..', 'dist', 'src', 'access', 'keys-cli.js');
const ROOT = 'root-key-0123456789-abcdefghij';

function runKeys(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KEYS_CLI, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Built processes on one PostgreSQL database (skipped without DATABASE_URL). */
describe('Application keys across processes', () => {
  afterEach(async () => {
    await ChildService.stopAll();
  });

  it("moves today's profiles to the default application, and the keys command makes a key without the HTTP API", async () => {
    await withFreshDatabase(async (url) => {
      // the schema as it was before applications, holding profiles
      const before = new DataSource({
        ...buildDataSourceOptions({ databaseUrl: url, poolSize: 1 }, { acquireTimeoutMs: 5_000 }),
        migrations: MIGRATIONS.filter((migration) => !migration.name.startsWith('ApplicationsKeysAudit')),
      });
      await before.initialize();
      await before.runMigrations({ transaction: 'each' });
      const [kept] = await before.query(
        `INSERT INTO profiles (external_id, summary) VALUES ('42', 'Lives in Oslo.'), ('43', '') RETURNING id`,
      );
      await before.query(
        `INSERT INTO traits (profile_id, key, value, value_type, category, confidence, source) VALUES ($1, 'city', '"Oslo"', 'string', 'personal', 1, 'manual')`,
        [kept.id],
      );
      await before.destroy();

      const made = await runKeys(['create', '--app', 'support', '--scope', 'proxy', '--scope', 'read'], {
        DATABASE_URL: url,
      });
      expect(made).toEqual({
        code: 0,
        stdout: expect.stringMatching(/^pms_[0-9a-f]{12}_\S{43}\n$/),
        stderr: expect.any(String),
      });
      expect(made.stderr).not.toContain(made.stdout.trim());

      const profiles = await query<{ external_id: string; application_id: string }>(
        url,
        `SELECT external_id, application_id FROM profiles ORDER BY external_id`,
      );
      expect(profiles).toEqual([
        { external_id: '42', application_id: DEFAULT_APPLICATION_ID },
        { external_id: '43', application_id: DEFAULT_APPLICATION_ID },
      ]);

      const service = await ChildService.start({ DATABASE_URL: url, SERVICE_API_KEY: ROOT });
      await service.ready();
      // the single-key service sees today's profile as before
      const old = await fetch(`${service.url}/api/profiles/42`, {
        headers: { Authorization: `Bearer ${ROOT}` },
      });
      expect(old.status).toBe(200);
      expect(((await old.json()) as { profile: { summary: string } }).profile.summary).toBe('Lives in Oslo.');
      // the new key acts in its own application, where "42" is another user
      const secret = made.stdout.trim();
      const theirs = await fetch(`${service.url}/api/profiles/42`, {
        headers: { Authorization: `Bearer ${secret}` },
      });
      expect(theirs.status).toBe(404);
      const current = await fetch(`${service.url}/api/keys/current`, {
        headers: { Authorization: `Bearer ${secret}` },
      });
      expect(await current.json()).toMatchObject({
        key: { root: false, application: { name: 'support' }, scopes: ['proxy', 'read'] },
      });

      const refused = await runKeys(['create', '--app', 'support', '--scope', 'everything'], {
        DATABASE_URL: url,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^No key created: unknown scope "everything"/);
    });
  }, 180_000);

  it('refuses a revoked key on every replica within a second', async () => {
    await withFreshDatabase(async (url) => {
      const env = { DATABASE_URL: url, SERVICE_API_KEY: ROOT, RATE_LIMIT_PER_MINUTE: '0' };
      const a = await ChildService.start(env);
      await a.ready();
      const b = await ChildService.start(env);
      await b.ready();
      const root = { Authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' };
      const created = await fetch(`${a.url}/api/keys`, {
        method: 'POST',
        headers: root,
        body: JSON.stringify({ application: 'default', scopes: ['read'], name: 'to revoke' }),
      });
      expect(created.status).toBe(201);
      const { key, secret } = (await created.json()) as { key: { id: string }; secret: string };
      const asKey = { Authorization: `Bearer ${secret}` };
      // both replicas know the key (and hold what they read of it)
      expect((await fetch(`${a.url}/api/profiles`, { headers: asKey })).status).toBe(200);
      expect((await fetch(`${b.url}/api/profiles`, { headers: asKey })).status).toBe(200);

      const revoked = await fetch(`${a.url}/api/keys/${key.id}`, { method: 'DELETE', headers: root });
      expect(revoked.status).toBe(200);
      const at = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - at < 5_000) {
        status = (await fetch(`${b.url}/api/profiles`, { headers: asKey })).status;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const took = Date.now() - at;
      expect(status).toBe(401);
      expect(took).toBeLessThan(1_000);
      expect((await fetch(`${a.url}/api/profiles`, { headers: asKey })).status).toBe(401);
    });
  }, 180_000);
});
