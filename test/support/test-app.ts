import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { App } from 'supertest/types';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup';
import { BackgroundWork } from '../../src/common/background-work';
import { FakeOpenAI, startFakeOpenAI } from './fake-openai-upstream';

export interface TestApp {
  app: NestExpressApplication;
  server: App;
  /** Base URL of the real HTTP server, e.g. http://127.0.0.1:40123 */
  url: string;
  dataSource: DataSource;
  api: () => ReturnType<typeof request>;
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

/** An app that relays to a fake OpenAI upstream, with the heuristic extractor; `close` stops both. */
export interface ProxiedTestApp extends TestApp {
  fake: FakeOpenAI;
}

export async function startProxiedTestApp(
  env: Record<string, string | undefined> = {},
): Promise<ProxiedTestApp> {
  const fake = await startFakeOpenAI();
  const t = await startTestApp({
    UPSTREAM_BASE_URL: fake.url,
    UPSTREAM_API_KEY: 'sk-test',
    EXTRACTOR: 'heuristic',
    ...env,
  });
  return {
    ...t,
    fake,
    close: async () => {
      await t.close();
      await fake.close();
    },
  };
}
