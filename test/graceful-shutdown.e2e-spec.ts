import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildService } from './support/child-service';
import { fakeEnv } from './support/fake-env';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';

const PIECES = ['one ', 'two ', 'three ', 'four ', 'five'];

/** SIGTERM to the built service while a slow stream is in flight. */
describe('Graceful shutdown of the built service', () => {
  let fake: FakeOpenAI;
  let dataDir: string;
  let service: ChildService | undefined;
  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    ...fakeEnv({ upstream: fake }),
    LOG_LEVEL: 'info',
    ...extra,
  });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    dataDir = mkdtempSync(join(tmpdir(), 'pms-shutdown-'));
  });

  afterEach(async () => {
    await service?.stop();
    fake.reset();
  });

  afterAll(async () => {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lets the stream finish, refuses new connections, records the turn and exits 0', async () => {
    service = await ChildService.start(env());
    await service.ready();
    const userId = `shutdown-user-${Date.now()}`;
    fake.script({ kind: 'stream', chunks: PIECES, delayMs: 300 });

    const stream = await openStream(service.url, userId);
    const first = await stream.read();
    expect(first.done).toBe(false);
    service.process.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(getOnNewConnection(`${service.url}/health`)).rejects.toThrow(/ECONNREFUSED/);

    const text = await readRest(stream, first.value);
    const exit = await service.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(contentOf(text)).toBe(PIECES.join(''));
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(service.output.join('')).toContain('"msg":"stopped"');

    // the turn recorded after the stream reached the database before it closed
    service = await ChildService.start(env());
    await service.ready();
    const exported = await fetch(`${service.url}/api/profiles/${userId}/export`);
    expect(exported.status).toBe(200);
    const { messages } = (await exported.json()) as { messages: Array<{ role: string; content: string }> };
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[1].content).toBe(PIECES.join(''));
  });

  it('cuts what is still running when the grace period is over, and still exits 0', async () => {
    service = await ChildService.start(env({ SHUTDOWN_GRACE_MS: '300' }));
    await service.ready();
    fake.script({ kind: 'stream', chunks: PIECES, delayMs: 2_000 });

    const stream = await openStream(service.url, `slow-user-${Date.now()}`);
    await stream.read();
    const signalledAt = Date.now();
    service.process.kill('SIGTERM');
    const exit = await service.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
    await expect(readRest(stream, new Uint8Array())).rejects.toThrow();
    expect(service.output.join('')).toContain('grace period of 300 ms over: cutting 1 request(s)');
  });
});

type StreamReader = ReadableStreamDefaultReader<Uint8Array>;

async function openStream(url: string, userId: string): Promise<StreamReader> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-id': userId },
    body: JSON.stringify({
      model: 'fake-model',
      stream: true,
      messages: [{ role: 'user', content: 'Count to five' }],
    }),
  });
  expect(res.status).toBe(200);
  return res.body!.getReader();
}

async function readRest(reader: StreamReader, start: Uint8Array | undefined): Promise<string> {
  const decoder = new TextDecoder();
  let text = start ? decoder.decode(start, { stream: true }) : '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/** The streamed assistant text: the `delta.content` of every `data:` event. */
function contentOf(sse: string): string {
  return sse
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices)
    .map((choices) => choices[0]?.delta.content ?? '')
    .join('');
}

/** A GET on a fresh TCP connection (no pooled keep-alive socket). */
function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}
