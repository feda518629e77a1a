import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../src/database/data-source-options';
import { ChildService, LogLine } from './support/child-service';
import { withFreshDatabase } from './support/fresh-database';
import { describeOn } from './support/databases';

const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
  version: string;
};
const FRAMEWORK_CONTEXTS = [
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
];

/** The lines of the start-up at info and above: what an operator sees with the default LOG_LEVEL. */
const startupLines = (service: ChildService): LogLine[] =>
  service
    .logLines()
    .filter((line) => !['debug', 'trace'].includes(line.level) && line.msg !== 'request completed');
const messages = (lines: LogLine[]) => lines.map((line) => `${line.level} ${line.msg}`);

/**
 * The built service as `npm start` runs it: configuration, the embedded database on disk, its lock.
 * None of this depends on the database under test, so it runs with the embedded suites only.
 */
describeOn('embedded', 'Booting the built service', () => {
  let dataDir: string;
  const embedded = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: undefined,
    DATA_DIR: dataDir,
    ...extra,
  });

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pms-boot-'));
  });

  afterEach(() => ChildService.stopAll());

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs on the embedded database with no server, keeps data across restarts, and locks DATA_DIR', async () => {
    const first = await ChildService.start(embedded({ LOG_LEVEL: 'info' }));
    await first.ready();
    // a handful of lines: what it is, where the data is, the database's creation as it happens, what
    // it calls, and the address it really listens on
    expect(messages(startupLines(first))).toEqual([
      `info Profile Memory Service ${version}: a memory layer for LLM applications (proxy at /v1, profiles at /api)`,
      `info database: embedded PostgreSQL (PGlite) in ${dataDir}`,
      'info creating a new embedded database (first start only: a few seconds)',
      expect.stringMatching(/^info embedded database created in \d+\.\d s$/),
      `info applying ${MIGRATIONS.length} migrations`,
      expect.stringMatching(new RegExp(`^info applied ${MIGRATIONS.length} migrations in \\d+\\.\\d s$`)),
      expect.stringMatching(/^info upstream: openai API at api\.openai\.com .*; extractor: heuristic /),
      `info listening on http://127.0.0.1:${first.port} (docs at /docs)`,
    ]);
    const created = await fetch(`${first.url}/api/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'persistent' }),
    });
    expect(created.status).toBe(201);
    const { profile } = (await created.json()) as { profile: { id: string } };
    expect(existsSync(join(dataDir, 'service.lock'))).toBe(true);

    const second = await ChildService.start(embedded({ LOG_LEVEL: 'info' }));
    const secondExit = await second.exited;
    expect(secondExit.code).toBe(1);
    // one clean line, no stack, no error logged besides it
    expect(second.stderr.join('')).toBe(
      `DATA_DIR ${dataDir} is in use by process ${first.process.pid}; two processes on one directory would lose writes.\n`,
    );
    expect(messages(startupLines(second))).toEqual([
      expect.stringMatching(/^info Profile Memory Service/),
      expect.stringMatching(/^info database: /),
    ]);

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
});

describeOn('postgres', 'Booting the built service on a server', () => {
  it('runs on the PostgreSQL server of DATABASE_URL and says what it uses, never the password', async () => {
    await withFreshDatabase(async (url) => {
      const withPassword = new URL(url);
      withPassword.username = 'postgres';
      withPassword.password = 'pw-never-logged'; // the test server trusts local connections
      const database = withPassword.pathname.slice(1);
      const service = await ChildService.start({
        DATABASE_URL: withPassword.toString(),
        LOG_LEVEL: 'debug',
        HOST: '0.0.0.0',
        UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
        UPSTREAM_API_KEY: 'sk-never-called',
        LLM_MODEL: 'tiny-model',
      });
      await service.ready();
      expect((await fetch(`${service.url}/ready`)).status).toBe(200);
      expect(messages(startupLines(service))).toEqual([
        expect.stringMatching(`^info Profile Memory Service ${version}`),
        `info database: PostgreSQL server ${withPassword.hostname}:${withPassword.port}, database ${database}`,
        `info applying ${MIGRATIONS.length} migrations`,
        expect.stringMatching(`^info applied ${MIGRATIONS.length} migrations`),
        'info upstream: openai API at 127.0.0.1:9; extractor: llm, each conversation turn and ingested ' +
          "text is sent to tiny-model at 127.0.0.1:9 to learn from it; when the LLM's last try on a turn " +
          'fails, the rules learn from it instead; GET /api/profiles/{id} shows its learning state',
        expect.stringMatching(
          `^warn SERVICE_API_KEY is not set and the service listens on 0.0.0.0: anyone who can reach port ${service.port} `,
        ),
        `info listening on http://0.0.0.0:${service.port} (docs at /docs)`,
      ]);
      // Nest's own lines (modules, routes) are debug
      const lines = service.logLines();
      expect(
        lines.filter((line) => FRAMEWORK_CONTEXTS.includes(line.context ?? '')).map((line) => line.level),
      ).toEqual(expect.arrayContaining(['debug']));
      expect(
        lines.filter((line) => FRAMEWORK_CONTEXTS.includes(line.context ?? '') && line.level !== 'debug'),
      ).toEqual([]);
      expect(lines.map((line) => line.msg)).toContain('Mapped {/health, GET} route');
      await service.stop();
      expect(service.output.join('')).not.toContain('pw-never-logged');
    });
  });

  it.each([
    ['it has a key', { HOST: '0.0.0.0', SERVICE_API_KEY: 'a-key' }],
    ['it listens on loopback only', { HOST: '127.0.0.1' }],
  ])('gives no exposure warning when %s', async (_label, env) => {
    const service = await ChildService.start({
      DATABASE_URL: process.env.DATABASE_URL,
      LOG_LEVEL: 'info',
      ...env,
    });
    await service.ready();
    await service.stop();
    const lines = startupLines(service);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
    expect(lines.map((line) => line.msg)).toContain(
      `listening on http://${env.HOST}:${service.port} (docs at /docs)`,
    );
  });

  it('refuses to start when the server cannot be reached: one line naming the server, not the password', async () => {
    const service = await ChildService.start({
      DATABASE_URL: 'postgres://app:pw-never-logged@127.0.0.1:1/nothing',
    });
    const { code } = await service.exited;
    expect(code).toBe(1);
    expect(service.stderr.join('')).toMatch(
      /^Cannot connect to the PostgreSQL server at 127\.0\.0\.1:1: .+\n$/,
    );
    expect(service.output.join('')).not.toContain('pw-never-logged');
    expect(service.output.join('')).not.toMatch(/\bat \w+ \(/);
  });

  it('starts three replicas at once on a fresh database: all come up, the migrations are applied once', async () => {
    await withFreshDatabase(async (url) => {
      const replicas = await Promise.all(
        [1, 2, 3].map(() => ChildService.start({ DATABASE_URL: url, LOG_LEVEL: 'info' })),
      );
      await Promise.all(replicas.map((replica) => replica.ready()));
      await Promise.all(replicas.map((replica) => replica.stop()));
      // one replica applied them; the others waited on the lock and found nothing to do, and none failed
      // or had to retry (without the lock, two of three failed a migration and booted on a retry)
      const applied = replicas.map(
        (replica) => replica.logLines().filter((line) => line.msg.startsWith('applied ')).length,
      );
      expect(applied.sort()).toEqual([0, 0, 1]);
      for (const replica of replicas) {
        expect(replica.logLines().filter((line) => ['warn', 'error', 'fatal'].includes(line.level))).toEqual(
          [],
        );
        expect(replica.output.join('')).not.toMatch(/failed|Retrying/);
      }
      const client = new Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ name: string; runs: number }>(
        'SELECT name, count(*)::int AS runs FROM migrations GROUP BY name ORDER BY name',
      );
      await client.end();
      expect(rows).toEqual(
        MIGRATIONS.map((migration) => ({ name: migration.name, runs: 1 })).sort((a, b) =>
          a.name.localeCompare(b.name),
        ),
      );
    });
  });
});
