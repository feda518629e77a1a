import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { withAdmin, ADMIN_URL } from './setup/postgres-databases';
import { ChildService } from './support/child-service';

const onServer = process.env.DATABASE_URL !== undefined;

/**
 * The built service as `npm start` runs it: configuration, the embedded database on disk, its lock.
 * None of this depends on the database under test, so it runs with the embedded suites only.
 */
(onServer ? describe.skip : describe)('Booting the built service', () => {
  let dataDir: string;
  const embedded = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: undefined,
    DATA_DIR: dataDir,
    ...extra,
  });

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pms-boot-'));
  });

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs on the embedded database with no server, keeps data across restarts, and locks DATA_DIR', async () => {
    const first = await ChildService.start(embedded());
    await first.ready();
    const created = await fetch(`${first.url}/api/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'persistent' }),
    });
    expect(created.status).toBe(201);
    const { profile } = (await created.json()) as { profile: { id: string } };
    expect(existsSync(join(dataDir, 'service.lock'))).toBe(true);

    const second = await ChildService.start(embedded());
    const secondExit = await second.exited;
    expect(secondExit.code).toBe(1);
    expect(second.output.join('')).toContain('is in use by process');

    await first.stop();
    expect(existsSync(join(dataDir, 'service.lock'))).toBe(false);

    const again = await ChildService.start(embedded());
    await again.ready();
    const fetched = await fetch(`${again.url}/api/profiles/persistent`);
    expect(fetched.status).toBe(200);
    expect(((await fetched.json()) as { profile: { id: string } }).profile.id).toBe(profile.id);
    await again.stop();
  });

  it('takes over a lock left by a process that died', async () => {
    writeFileSync(join(dataDir, 'service.lock'), '999999999');
    const service = await ChildService.start(embedded());
    await service.ready();
    await service.stop();
  });

  it.each([
    ['RATE_LIMIT_PER_MINUTE', { RATE_LIMIT_PER_MINUTE: 'x' }, 'RATE_LIMIT_PER_MINUTE'],
    ['UPSTREAM_BASE_URL', { UPSTREAM_BASE_URL: 'ftp://example' }, 'UPSTREAM_BASE_URL'],
    ['EXTRACTOR', { EXTRACTOR: 'magic' }, 'EXTRACTOR'],
    ['BODY_LIMIT', { BODY_LIMIT: 'lots' }, 'BODY_LIMIT'],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
  ])('refuses to start with a wrong %s, naming it', async (_label, env, variable) => {
    const service = await ChildService.start({ ...embedded(), ...env });
    const { code } = await service.exited;
    expect(code).toBe(1);
    expect(service.output.join('')).toContain(variable);
    expect(service.output.join('')).not.toMatch(/at \w+ \(/);
  });

  it('refuses to start with a broken TRAIT_SCHEMAS_FILE, naming it', async () => {
    const file = join(dataDir, 'schemas.json');
    writeFileSync(file, JSON.stringify([{ key: 'bad key', valueType: 'string' }]));
    const service = await ChildService.start(embedded({ TRAIT_SCHEMAS_FILE: file }));
    const { code } = await service.exited;
    expect(code).toBe(1);
    expect(service.output.join('')).toContain('TRAIT_SCHEMAS_FILE');
  });

  it('validates traits against the schemas of TRAIT_SCHEMAS_FILE', async () => {
    const file = join(dataDir, 'custom-schemas.json');
    writeFileSync(
      file,
      JSON.stringify({
        traits: [
          {
            key: 'diet',
            label: 'Diet',
            description: 'What the user eats',
            valueType: 'enum',
            enumValues: ['vegan', 'vegetarian', 'omnivore'],
            category: 'preferences',
            extraction: { enabled: true, promptSnippet: 'diet', confidenceThreshold: 0.5 },
            injection: { enabled: true, template: 'Diet: {{value}}', priority: 1 },
          },
        ],
      }),
    );
    const service = await ChildService.start(
      embedded({ TRAIT_SCHEMAS_FILE: file, DATA_DIR: join(dataDir, 'schemas-db') }),
    );
    await service.ready();
    await fetch(`${service.url}/api/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'eater' }),
    });
    const put = (key: string, value: unknown) =>
      fetch(`${service.url}/api/profiles/eater/traits/${key}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value }),
      });
    expect((await put('diet', 'carnivore')).status).toBe(400);
    const ok = await put('diet', 'vegan');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { trait: { category: string } }).trait.category).toBe('preferences');
    // `name` is a default schema, not in this file: it becomes a custom trait with an inferred type.
    const name = await put('name', 42);
    expect(((await name.json()) as { trait: { category: string; valueType: string } }).trait).toMatchObject({
      category: 'custom',
      valueType: 'number',
    });
    await service.stop();
  });

  it('starts three replicas at once on a fresh database: all come up, each migration runs once', async () => {
    const name = `pms_replicas_${Date.now()}_${process.pid}`;
    await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`).then(() => undefined));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    try {
      const replicas = await Promise.all(
        [1, 2, 3].map(() => ChildService.start({ DATABASE_URL: url.toString(), LOG_LEVEL: 'info' })),
      );
      await Promise.all(replicas.map((replica) => replica.ready(30_000)));
      const client = new Client({ connectionString: url.toString() });
      await client.connect();
      const { rows } = await client.query<{ name: string; runs: string }>(
        'SELECT name, count(*) AS runs FROM migrations GROUP BY name',
      );
      await client.end();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => row.runs !== '1')).toEqual([]);
      for (const replica of replicas) console.log(replica.output.join('').slice(0, 3000));
      await Promise.all(replicas.map((replica) => replica.stop()));
    } finally {
      await withAdmin((admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined),
      );
    }
  });
});

(onServer ? describe : describe.skip)('Booting the built service on a server', () => {
  it('runs on the PostgreSQL server of DATABASE_URL', async () => {
    const service = await ChildService.start({ DATABASE_URL: process.env.DATABASE_URL });
    await service.ready(15_000);
    const ready = await fetch(`${service.url}/ready`);
    expect(ready.status).toBe(200);
    await service.stop();
  });

  it('starts three replicas at once on a fresh database: all come up, each migration runs once', async () => {
    const name = `pms_replicas_${Date.now()}_${process.pid}`;
    await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`).then(() => undefined));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    try {
      const replicas = await Promise.all(
        [1, 2, 3].map(() => ChildService.start({ DATABASE_URL: url.toString(), LOG_LEVEL: 'info' })),
      );
      await Promise.all(replicas.map((replica) => replica.ready(30_000)));
      const client = new Client({ connectionString: url.toString() });
      await client.connect();
      const { rows } = await client.query<{ name: string; runs: string }>(
        'SELECT name, count(*) AS runs FROM migrations GROUP BY name',
      );
      await client.end();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => row.runs !== '1')).toEqual([]);
      for (const replica of replicas) console.log(replica.output.join('').slice(0, 3000));
      await Promise.all(replicas.map((replica) => replica.stop()));
    } finally {
      await withAdmin((admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined),
      );
    }
  });
});
