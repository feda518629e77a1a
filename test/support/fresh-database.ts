import { ADMIN_URL, withAdmin } from '../setup/postgres-databases';

/** A new, empty database on the test server for `work`, dropped afterwards; `work` gets its URL. */
export async function withFreshDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const name = `pms_fresh_${Date.now()}_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  await withAdmin(async (admin) => {
    await admin.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    return await work(url.toString());
  } finally {
    await withAdmin(async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  }
}
