import { PGlite } from '@electric-sql/pglite';
import { createServer } from 'node:http';
import { Pool as PgPool } from 'pg';
import { Pool } from 'undici';

/**
 * The floor of any Node service that relays chat requests and reads the database on each one: read the
 * JSON body, look up one row with a prepared statement, add a system message, forward the request with
 * an undici pool, parse the answer and return it. No framework, no logging, no validation: what is left
 * when everything the service adds is taken away. Run as its own process by the throughput benchmark
 * (UPSTREAM_URL, PORT, and DATABASE_URL for a server, else an in-memory PGlite).
 */
async function main(): Promise<void> {
  const upstreamUrl = new URL(required('UPSTREAM_URL'));
  const upstream = new Pool(upstreamUrl.origin, { connections: 128, pipelining: 1 });
  const lookUp = await profileLookup(process.env.DATABASE_URL);

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as {
          messages: Array<{ role: string; content: string }>;
        };
        const userId = String(req.headers['x-service-id'] ?? 'floor-user');
        const summary = await lookUp(userId);
        body.messages = [{ role: 'system', content: `About the user: ${summary}` }, ...body.messages];
        const answer = await upstream.request({
          method: 'POST',
          path: `${upstreamUrl.pathname}/chat/completions`,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (answer.headers['content-type']?.toString().startsWith('text/event-stream')) {
          res.writeHead(answer.statusCode, { 'content-type': 'text/event-stream' });
          for await (const chunk of answer.body) res.write(chunk);
          res.end();
          return;
        }
        const parsed: unknown = await answer.body.json();
        const payload = JSON.stringify(parsed);
        res.writeHead(answer.statusCode, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        });
        res.end(payload);
      })().catch((error: unknown) => {
        res.writeHead(502).end(String(error));
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(required('PORT')), '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

/** One prepared statement per request: the user's row by external id. */
async function profileLookup(databaseUrl: string | undefined): Promise<(userId: string) => Promise<string>> {
  const setUp = `CREATE TABLE IF NOT EXISTS floor_profiles (external_id text PRIMARY KEY, summary text NOT NULL)`;
  const seed = `INSERT INTO floor_profiles SELECT 'bench-user-' || i, 'likes benchmarks' FROM generate_series(0, 99) i
                ON CONFLICT DO NOTHING`;
  const text = `SELECT summary FROM floor_profiles WHERE external_id = $1`;
  if (databaseUrl) {
    const pool = new PgPool({ connectionString: databaseUrl, max: 10 });
    await pool.query(setUp);
    await pool.query(seed);
    return async (userId) => {
      const result = await pool.query<{ summary: string }>({ name: 'floor-profile', text, values: [userId] });
      return result.rows[0]?.summary ?? '';
    };
  }
  const pglite = await PGlite.create();
  await pglite.exec(`${setUp}; ${seed}`);
  return async (userId) => {
    const result = await pglite.query<{ summary: string }>(text, [userId]);
    return result.rows[0]?.summary ?? '';
  };
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
