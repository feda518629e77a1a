import { createServer, Server } from 'node:http';

/**
 * A minimal OpenAI-compatible upstream for benchmarks: a fixed completion, or a short stream. It does as
 * little work as possible so that the measured difference is the proxy's own cost.
 */
export async function startBenchUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
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
      for (const piece of stream) res.write(piece);
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
