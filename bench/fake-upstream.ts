import { createServer, Server, ServerResponse } from 'node:http';

/**
 * A minimal OpenAI-compatible upstream for benchmarks: a fixed completion, or a short stream. It does as
 * little work as possible so that the measured difference is the proxy's own cost.
 */
export interface BenchUpstream {
  url: string;
  /** From now on `/v1/embeddings` answers with this model's vectors. */
  serveEmbeddings(model: { embed(text: string): number[] }): void;
  close: () => Promise<void>;
}

export async function startBenchUpstream(): Promise<BenchUpstream> {
  let embeddings: { embed(text: string): number[] } | null = null;
  const completion = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'bench-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Sure, here is a short answer.' },
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 50, completion_tokens: 8, total_tokens: 58 },
  });
  const chunk = (content: string, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'bench-model', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
  const stream = [chunk('Sure, '), chunk('here is '), chunk('a short answer.', 'stop'), 'data: [DONE]\n\n'];

  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (req.url?.endsWith('/embeddings')) return answerEmbeddings(res, Buffer.concat(parts), embeddings);
      const wantsStream = Buffer.concat(parts).includes('"stream":true');
      if (!wantsStream) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(completion),
        });
        res.end(completion);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (!Buffer.concat(parts).includes('(slow stream)')) {
        for (const piece of stream) res.write(piece);
        res.end();
        return;
      }
      // A stream that takes its time: a client can leave in the middle of it.
      let next = 0;
      const timer = setInterval(() => {
        if (next < stream.length) res.write(stream[next++]);
        else {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      res.once('close', () => clearInterval(timer));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    serveEmbeddings: (model) => {
      embeddings = model;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answerEmbeddings(
  res: ServerResponse,
  body: Buffer,
  model: { embed(text: string): number[] } | null,
): void {
  const request = JSON.parse(body.toString('utf8')) as { input: string | string[] };
  const inputs = Array.isArray(request.input) ? request.input : [request.input];
  const payload = model
    ? JSON.stringify({
        object: 'list',
        data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: model.embed(input) })),
        model: 'bench-embeddings',
        usage: { prompt_tokens: 0, total_tokens: 0 },
      })
    : JSON.stringify({ error: { message: 'no embeddings model', type: 'invalid_request_error' } });
  res.writeHead(model ? 200 : 404, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** A model without meaning, for timing: a deterministic pseudo-random vector per text. */
export function pseudoRandomEmbeddings(dimensions: number): { embed(text: string): number[] } {
  return {
    embed(text) {
      let state = 2166136261;
      for (const char of text) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0;
      return Array.from({ length: dimensions }, () => {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        return state / 2 ** 31 - 1;
      });
    },
  };
}
