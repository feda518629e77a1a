import { createServer, Server } from 'node:http';
import { LoadResult, percentile, round, runLoad } from './load';
import { ServiceProcess } from './service-process';

const PROFILES = 50;
const SEND_CONCURRENCY = 8;
const TURN_TOKEN = /\(turn (\d+)\)/g;

interface FakeLlm {
  url: string;
  /** When each turn's extraction was answered (ms since epoch), by turn number. */
  answeredAt: Map<number, number>;
  close: () => Promise<void>;
}

/**
 * A fake extraction LLM that answers after `latencyMs`: one memory per turn it finds in the text
 * ("(turn N)"), and one sentence for a summary request.
 */
async function startFakeLlm(latencyMs: number): Promise<FakeLlm> {
  const answeredAt = new Map<number, number>();
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const turns = [...body.matchAll(TURN_TOKEN)].map((match) => Number(match[1]));
      const isSummary = body.includes('short profile summary');
      const content = isSummary
        ? 'The user talks about cooking.'
        : JSON.stringify({
            traits: [{ key: 'interests', value: ['cooking'], confidence: 0.8 }],
            memories: [...new Set(turns)].map((turn) => ({
              content: `The user asked about recipe number ${turn}.`,
              type: 'context',
              importance: 0.5,
            })),
          });
      const completion = JSON.stringify({
        id: 'chatcmpl-bench-llm',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'bench-llm',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      });
      setTimeout(() => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(completion),
        });
        res.end(completion);
        const now = Date.now();
        if (!isSummary) for (const turn of turns) if (!answeredAt.has(turn)) answeredAt.set(turn, now);
      }, latencyMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    answeredAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Background extraction throughput with a fake LLM: chat turns are sent through the proxy (8 at a time,
 * spread over 50 profiles) to a service whose extraction LLM is a local fake answering after 0 ms and
 * after 100 ms. `throughput` is turns extracted per second, from the first turn sent to the last turn's
 * extraction answered; p50/p99 are the lag from a turn's response to its extraction answer; `errors` are
 * turns whose memory was not stored. `serviceEnv` is the target's environment (database, upstream).
 */
export async function benchExtraction(
  serviceEnv: Record<string, string | undefined>,
  scale: number,
): Promise<LoadResult[]> {
  const turns = Math.max(100, Math.round(400 * scale));
  const results: LoadResult[] = [];
  for (const latencyMs of [0, 100]) {
    const llm = await startFakeLlm(latencyMs);
    const service = await ServiceProcess.start({
      ...serviceEnv,
      EXTRACTOR: 'llm',
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: 'bench',
    });
    try {
      const run = `r${latencyMs}`;
      const sentAt = new Map<number, number>();
      const started = Date.now();
      const sent = await runLoad(service.url, 'turns', {
        requests: turns,
        concurrency: SEND_CONCURRENCY,
        next: (i) => {
          sentAt.set(i, Date.now());
          return {
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { 'x-service-id': `bench-extract-${run}-${i % PROFILES}` },
            body: {
              model: 'bench-model',
              messages: [{ role: 'user', content: `I want a new recipe for dinner tonight (turn ${i}).` }],
            },
          };
        },
      });
      await waitFor(() => llm.answeredAt.size >= turns - sent.errors, 300_000);
      const last = Math.max(...llm.answeredAt.values());
      const lags = [...llm.answeredAt.entries()]
        .map(([turn, at]) => at - (sentAt.get(turn) ?? at))
        .sort((a, b) => a - b);
      const stored = await storedTurns(service.url, run, turns);
      const seconds = (last - started) / 1000;
      results.push({
        name: `background extraction, fake LLM ${latencyMs} ms`,
        requests: turns,
        concurrency: Number(serviceEnv.EXTRACTION_CONCURRENCY ?? 2),
        seconds: round(seconds),
        throughput: round(turns / seconds),
        p50Ms: round(percentile(lags, 0.5)),
        p99Ms: round(percentile(lags, 0.99)),
        errors: turns - stored,
      });
    } finally {
      await service.stop();
      await llm.close();
    }
  }
  return results;
}

/** Memories stored for this run's turns, once the last answers have been applied (checked, not timed). */
async function storedTurns(baseUrl: string, run: string, turns: number): Promise<number> {
  let stored = 0;
  await waitFor(async () => {
    stored = 0;
    for (let p = 0; p < Math.min(PROFILES, turns); p++) {
      const res = await fetch(`${baseUrl}/api/profiles/bench-extract-${run}-${p}/memories?limit=100`);
      if (res.ok) stored += ((await res.json()) as { memories: unknown[] }).memories.length;
    }
    return stored >= turns;
  }, 10_000).catch(() => undefined);
  return stored;
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
