import { Client } from 'pg';
import { chromium } from 'playwright-core';

/** Memories of the profile the console opens. */
export const CONSOLE_BENCH_MEMORIES = 100_000;
const RUNS = 7;

export interface ConsoleOpenReport {
  memories: number;
  /** The API calls the profile page makes, all at once as the browser makes them. */
  apiMs: { median: number; max: number; runs: number };
  /** From navigating to the profile in Chromium until its first page of memories is shown. */
  browserMs: { median: number; max: number; runs: number } | null;
}

/**
 * The console's profile page on a profile with 100,000 memories (written straight into the database,
 * so PostgreSQL only): what each open costs the API, and the whole open in a headless Chromium.
 */
export async function benchConsoleOpen(serviceUrl: string, databaseUrl: string): Promise<ConsoleOpenReport> {
  const externalId = `console-bench-${Date.now()}`;
  const created = await fetch(`${serviceUrl}/api/profiles`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ externalId }),
  });
  const { profile } = (await created.json()) as { profile: { id: string } };
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      // a memory a minute, as a long-lived profile gathers them
      `INSERT INTO memories (profile_id, content, content_hash, type, importance, created_at)
       SELECT $1, 'Remembered fact number ' || i, md5('Remembered fact number ' || i), 'fact', (i % 100) / 100.0,
              now() - make_interval(mins => i)
       FROM generate_series(1, $2) AS i`,
      [profile.id, CONSOLE_BENCH_MEMORIES],
    );
    await client.query('ANALYZE memories');
  } finally {
    await client.end();
  }
  const id = profile.id;
  const paths = [
    `/api/profiles/${id}`,
    `/api/profiles/${id}/traits`,
    `/api/profiles/${id}/memories?limit=21&offset=0`,
    `/api/profiles/${id}/messages?limit=10`,
    `/api/profiles/${id}/extraction`,
  ];
  const api: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    await Promise.all(paths.map(async (path) => (await fetch(`${serviceUrl}${path}`)).arrayBuffer()));
    api.push(performance.now() - started);
  }
  return {
    memories: CONSOLE_BENCH_MEMORIES,
    apiMs: summary(api),
    browserMs: await browserOpen(serviceUrl, id),
  };
}

async function browserOpen(serviceUrl: string, profileId: string): Promise<ConsoleOpenReport['browserMs']> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-gpu',
    ],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${serviceUrl}/admin/`);
    await page.getByLabel('API key').fill('bench');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Profiles' }).waitFor();
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      await page.goto(`${serviceUrl}/admin/#/profiles`);
      await page.getByRole('heading', { name: 'Profiles' }).waitFor();
      const started = performance.now();
      await page.goto(`${serviceUrl}/admin/#/profiles/${profileId}`);
      await page.locator('.memories li').nth(19).waitFor();
      await page.getByText('No chat turns yet.').waitFor();
      times.push(performance.now() - started);
    }
    return summary(times);
  } finally {
    await browser.close();
  }
}

function summary(times: number[]): { median: number; max: number; runs: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    median: round(sorted[Math.floor(sorted.length / 2)]),
    max: round(sorted[sorted.length - 1]),
    runs: times.length,
  };
}
