import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { App } from 'supertest/types';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup';
import { BackgroundWork } from '../../src/common/background-work';
import { FakeAnthropic, startFakeAnthropic } from './fake-anthropic-upstream';
import { fakeEnv } from './fake-env';
import { FakeOpenAI, FakeOpenAIOptions, startFakeOpenAI } from './fake-openai-upstream';

export interface TestApp {
  app: NestExpressApplication;
  server: App;
  /** Base URL of the real HTTP server, e.g. http://127.0.0.1:40123 */
  url: string;
  dataSource: DataSource;
  api: () => ReturnType<typeof request>;
  /** The variables the app was started with: another app started with them shares its fakes. */
  env: Record<string, string | undefined>;
  /** SERVICE_API_KEY, when the app has one. */
  serviceKey: string | undefined;
  /** Like `api`, but every request carries the service key when the app has one (for set-up calls). */
  admin: () => AdminClient;
  /** Resolves when the work started after responses (recording, extraction) has finished. */
  drain: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * Starts the application as main.ts does (same module, pipeline and body parsing) on a random loopback
 * port. `env` is applied while the app reads its configuration and restored afterwards. On a
 * PostgreSQL server (DATABASE_URL set) the tables are emptied first, so each suite starts clean.
 */
export async function startTestApp(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  // emptied before the app starts, so that its boot work (sweeps) never sees an earlier suite's rows
  const sharedServer = process.env.DATABASE_URL !== undefined && env.DATABASE_URL === undefined;
  if (sharedServer) await emptyServerDatabase(process.env.DATABASE_URL!);
  const saved = new Map(Object.keys(env).map((key) => [key, process.env[key]]));
  applyEnv(env);
  let app: NestExpressApplication;
  try {
    app = await createApp();
  } finally {
    applyEnv(Object.fromEntries(saved));
  }
  await app.listen(0, '127.0.0.1');
  const dataSource = app.get(DataSource);
  // and its boot work is over before the test writes anything that work could pick up
  if (sharedServer) await app.get(BackgroundWork).drain();
  const server = app.getHttpServer() as App;
  const address = (app.getHttpServer() as { address(): { port: number } }).address();
  return {
    app,
    server,
    url: `http://127.0.0.1:${address.port}`,
    dataSource,
    api: () => request(server),
    env,
    serviceKey: env.SERVICE_API_KEY,
    admin: () => adminClient(server, env.SERVICE_API_KEY),
    drain: () => app.get(BackgroundWork).drain(),
    close: () => app.close(),
  };
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type AdminClient = Record<Method, (url: string) => request.Test>;

function adminClient(server: App, apiKey: string | undefined): AdminClient {
  const call = (method: Method) => (url: string) => {
    const test = request(server)[method](url);
    return apiKey ? test.set('Authorization', `Bearer ${apiKey}`) : test;
  };
  return {
    get: call('get'),
    post: call('post'),
    put: call('put'),
    patch: call('patch'),
    delete: call('delete'),
  };
}

const TRUNCATE_ALL =
  'TRUNCATE profiles, traits, memories, memory_embeddings, messages, job_leases, profile_history, api_keys, audit_events';
const DELETE_APPLICATIONS = "DELETE FROM applications WHERE name <> 'default'";

export async function truncateAll(dataSource: DataSource): Promise<void> {
  await dataSource.query(TRUNCATE_ALL);
  await dataSource.query(DELETE_APPLICATIONS);
}

/** Empties the server's tables, if they exist yet (a new database is migrated by the app's boot). */
async function emptyServerDatabase(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const [{ migrated }] = (
      await client.query(`SELECT to_regclass('profile_history') IS NOT NULL AS migrated`)
    ).rows as Array<{ migrated: boolean }>;
    if (migrated) {
      await client.query(TRUNCATE_ALL);
      await client.query(DELETE_APPLICATIONS);
    }
  } finally {
    await client.end();
  }
}

function applyEnv(env: Record<string, string | undefined>): void {
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
}

type UpstreamKind = 'openai' | 'anthropic';
type FakeUpstream<U> = U extends 'anthropic' ? FakeAnthropic : U extends 'openai' ? FakeOpenAI : never;

export interface TestAppOptions<
  U extends UpstreamKind | undefined,
  E extends 'heuristic' | 'llm' | undefined,
> {
  /**
   * A fake upstream on loopback that the proxy relays to (`t.upstream`). The app sends it the key
   * `upstreamKey` and the fake refuses any other; the extractor is the heuristic one unless `extractor` says.
   */
  upstream?: U;
  upstreamKey?: string;
  /** Options of the fake OpenAI upstream (its embeddings model). */
  upstreamOptions?: FakeOpenAIOptions;
  /** `llm` learns through a second fake OpenAI server (`t.llm`), with the key `sk-llm`. */
  extractor?: E;
  /** SERVICE_API_KEY: `t.admin()` and the request helpers carry it. */
  serviceKey?: string;
  /** Any other variables; they win over the ones above. */
  env?: Record<string, string | undefined>;
}

/** The app of a describe block and its fakes; its fields are set once the block's beforeAll has run. */
export type SuiteApp<U = undefined, E = undefined> = TestApp & {
  upstream: FakeUpstream<U>;
  llm: E extends 'llm' ? FakeOpenAI : never;
};

/**
 * Starts an app (and the fakes it is told of) for the enclosing describe block and closes them after
 * it. Between tests it waits for the app's background work (afterEach) and forgets what the fakes
 * received and were scripted (beforeEach), so each test reads only its own requests.
 */
export function useTestApp<
  U extends UpstreamKind | undefined = undefined,
  E extends 'heuristic' | 'llm' | undefined = undefined,
>(options: TestAppOptions<U, E> = {}): SuiteApp<U, E> {
  const suite = {} as SuiteApp<U, E>;
  let fakes: Array<FakeOpenAI | FakeAnthropic> = [];
  let app: TestApp | undefined;

  const start = async (): Promise<void> => {
    const upstreamKey = options.upstreamKey ?? 'sk-upstream';
    let upstream: FakeOpenAI | FakeAnthropic | undefined;
    if (options.upstream === 'anthropic') upstream = await startFakeAnthropic({ requireApiKey: upstreamKey });
    if (options.upstream === 'openai') {
      upstream = await startFakeOpenAI({ requireApiKey: upstreamKey, ...options.upstreamOptions });
    }
    const llm = options.extractor === 'llm' ? await startFakeOpenAI() : undefined;
    fakes = [upstream, llm].filter((fake) => fake !== undefined);
    const env = fakeEnv({ upstream, anthropic: options.upstream === 'anthropic', upstreamKey, llm });
    if (options.extractor !== undefined) env.EXTRACTOR = options.extractor;
    if (options.serviceKey !== undefined) env.SERVICE_API_KEY = options.serviceKey;
    app = await startTestApp({ ...env, ...options.env });
    Object.assign(suite, app, { upstream, llm });
  };
  const stop = async (): Promise<void> => {
    await app?.close();
    for (const fake of fakes) await fake.close();
    app = undefined;
    fakes = [];
  };

  beforeAll(start);
  afterAll(stop);
  beforeEach(() => fakes.forEach((fake) => fake.reset()));
  afterEach(() => app?.drain());
  return suite;
}
