import { Client } from 'pg';
import { Pool } from 'undici';
import { round } from './load';
import { ServiceProcess } from './service-process';

const CONNECTIONS = 16;
const USER = 'soak-user';

export interface SoakReport {
  seconds: number;
  connections: number;
  /** Answers read whole by the client: each one's turn must be stored. */
  completedTurns: number;
  /** Streams the client cut after the first chunk: none of them may be stored. */
  cutStreams: number;
  failedRequests: number;
  storedTurns: number;
  turnsPerSecond: number;
  /** Other users' reads during the load (one every 100 ms). */
  otherUsersP99Ms: number;
  otherUsersMaxMs: number;
  /** Whether /ready said 503 at some point of the load (it may, when the turn queue is full). */
  readyWasDown: boolean;
  /** From the end of the load until /ready answers 200 and every turn is stored. */
  recoverySeconds: number;
}

/**
 * Many connections chatting for one user for minutes (BENCH_SOAK_SECONDS, default 300): plain
 * answers, streams read at once, streams read slowly, streams cut after their first chunk. Every
 * completed turn must be stored (and no cut one), other users must still be served meanwhile, and the
 * service must be ready again within seconds of the end. Needs a PostgreSQL server (the turns are
 * counted in it).
 */
export async function benchSoak(
  serviceEnv: Record<string, string | undefined>,
  seconds: number,
): Promise<SoakReport | undefined> {
  if (!serviceEnv.DATABASE_URL) return undefined;
  const service = await ServiceProcess.start(serviceEnv);
  try {
    const api = (path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
      fetch(`${service.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    await api('/api/profiles', { externalId: USER });
    for (let m = 0; m < 40; m++) {
      await api(`/api/profiles/${USER}/memories`, {
        content: `Soak fact ${m} about cooking and trains`,
        type: 'fact',
      });
    }

    const pool = new Pool(service.url, { connections: CONNECTIONS, pipelining: 1 });
    const deadline = Date.now() + seconds * 1000;
    let completedTurns = 0;
    let cutStreams = 0;
    let failedRequests = 0;
    let readyWasDown = false;
    const chat = async (kind: number, n: number) => {
      const stream = kind !== 0;
      const res = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', 'x-service-id': USER },
        body: JSON.stringify({
          model: 'bench-model',
          stream,
          messages: [
            {
              role: 'user',
              content: `Tell me about cooking and trains (${n})${kind === 3 ? ' (slow stream)' : ''}`,
            },
          ],
        }),
      });
      if (res.statusCode !== 200) {
        failedRequests++;
        await res.body.dump();
        return;
      }
      if (kind === 3) {
        const chunks = res.body[Symbol.asyncIterator]();
        await chunks.next();
        res.body.destroy();
        cutStreams++;
        return;
      }
      let text = '';
      for await (const chunk of res.body) {
        text += (chunk as Buffer).toString();
        if (kind === 2) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (!stream || text.includes('[DONE]')) completedTurns++;
      else failedRequests++;
    };
    const worker = async (w: number) => {
      for (let n = 0; Date.now() < deadline; n++) {
        await chat((w + n) % 4, n).catch(() => failedRequests++);
      }
    };
    const otherUsers: number[] = [];
    const probe = async () => {
      while (Date.now() < deadline) {
        const started = performance.now();
        await api('/api/profiles?limit=5').catch(() => undefined);
        otherUsers.push(performance.now() - started);
        if ((await api('/ready').catch(() => null))?.status !== 200) readyWasDown = true;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await Promise.all([...Array.from({ length: CONNECTIONS }, (_, w) => worker(w)), probe()]);
    await pool.close();

    const ended = Date.now();
    const storedTurns = async () => {
      const client = new Client({ connectionString: serviceEnv.DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query<{ count: number }>(
          `SELECT count(*)::int AS count FROM messages m JOIN profiles p ON p.id = m.profile_id
           WHERE p.external_id = $1 AND m.role = 'user'`,
          [USER],
        );
        return rows[0].count;
      } finally {
        await client.end();
      }
    };
    let stored = await storedTurns();
    while (Date.now() - ended < 120_000) {
      const ready = (await api('/ready').catch(() => null))?.status === 200;
      stored = await storedTurns();
      if (ready && stored >= completedTurns) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    otherUsers.sort((a, b) => a - b);
    return {
      seconds,
      connections: CONNECTIONS,
      completedTurns,
      cutStreams,
      failedRequests,
      storedTurns: stored,
      turnsPerSecond: round(completedTurns / seconds),
      otherUsersP99Ms: round(otherUsers[Math.floor(otherUsers.length * 0.99)] ?? 0),
      otherUsersMaxMs: round(otherUsers.at(-1) ?? 0),
      readyWasDown,
      recoverySeconds: round((Date.now() - ended) / 1000),
    };
  } finally {
    await service.stop();
  }
}
