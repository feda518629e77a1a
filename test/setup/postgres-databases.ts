import { Client } from 'pg';

/** The server's administration URL (a database the test user may connect to and create others from). */
export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Names this run's databases: `<prefix>_<worker id>`. */
const PREFIX_ENV = 'PMS_TEST_PG_PREFIX';
const WORKERS_ENV = 'PMS_TEST_PG_WORKERS';

export function workerDatabaseUrl(workerId: number): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${process.env[PREFIX_ENV]}_${workerId}`;
  return url.toString();
}

/** Runs `work` on a connection to the administration database; says clearly when the server is down. */
export async function withAdmin(work: (client: Client) => Promise<void>): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at ${ADMIN_URL} (${(error as Error).message}). Start it, or point ` +
        'TEST_PG_ADMIN_URL at a server, or run only `--selectProjects unit embedded`.',
      { cause: error },
    );
  }
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/** Global setup of the server suites: a fresh database for each Jest worker. */
export default async function createWorkerDatabases(globalConfig: { maxWorkers: number }): Promise<void> {
  process.env[PREFIX_ENV] = `pms_test_${Date.now()}_${process.pid}`;
  process.env[WORKERS_ENV] = String(globalConfig.maxWorkers);
  await withAdmin(async (client) => {
    for (let worker = 1; worker <= globalConfig.maxWorkers; worker++) {
      await client.query(`CREATE DATABASE ${process.env[PREFIX_ENV]}_${worker}`);
    }
  });
}

export async function dropWorkerDatabases(): Promise<void> {
  const workers = Number(process.env[WORKERS_ENV] ?? '0');
  await withAdmin(async (client) => {
    for (let worker = 1; worker <= workers; worker++) {
      await client.query(`DROP DATABASE IF EXISTS ${process.env[PREFIX_ENV]}_${worker} WITH (FORCE)`);
    }
  });
}
