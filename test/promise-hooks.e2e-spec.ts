import { join } from 'node:path';
import { ChildService, emptyServerDatabase } from './support/child-service';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';
import { fakeEnv } from './support/fake-env';

const PROBE = join(__dirname, 'support', 'promise-hook-probe.js');

/**
 * Serving requests leaves promise hooks off in the process: on Node 20 a hook (an AsyncLocalStorage
 * binding the request's logger to its handling, as nestjs-pino did) makes every promise pay for it,
 * about a sixth of a proxied chat's CPU. The built service runs with a probe preloaded that reports,
 * on SIGUSR2, whether a promise reaction gets an async id (it does only while hooks are on). On a Node
 * whose AsyncLocalStorage needs no promise hooks (24 and later) this would pass with a binding too.
 */
describe('Promise hooks in the built service', () => {
  let fake: FakeOpenAI;
  let service: ChildService;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    await emptyServerDatabase();
    service = await ChildService.start(fakeEnv({ upstream: fake }), { nodeArgs: ['-r', PROBE] });
    await service.ready();
  });

  afterAll(async () => {
    await service?.stop();
    await fake?.close();
  });

  const probe = async (): Promise<string> => {
    const seen = service.stderr.length;
    service.process.kill('SIGUSR2');
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const answer = /promise-hooks:(on|off)/.exec(service.stderr.slice(seen).join(''));
      if (answer) return answer[1];
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the probe did not answer');
  };

  it('stays off through chats, streams, API routes and refusals', async () => {
    expect(await probe()).toBe('off');
    const chat = (stream: boolean) =>
      fetch(`${service.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-id': 'hooks-user' },
        body: JSON.stringify({
          model: 'fake-model',
          stream,
          messages: [{ role: 'user', content: 'I live in Oslo. What should I wear today?' }],
        }),
      });
    for (const res of [await chat(false), await chat(true)]) {
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    for (const [path, status] of [
      ['/api/profiles/hooks-user', 200],
      ['/api/profiles/hooks-user/memories', 200],
      ['/api/profiles/nobody-here', 404],
      ['/health', 200],
    ] as const) {
      const res = await fetch(`${service.url}${path}`);
      await res.arrayBuffer();
      expect(res.status).toBe(status);
    }
    const ingest = await fetch(`${service.url}/api/profiles/hooks-user/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: 'I work as a nurse.' }),
    });
    expect(ingest.status).toBe(200);
    await ingest.arrayBuffer();
    const invalid = await fetch(`${service.url}/api/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"externalId": ',
    });
    expect(invalid.status).toBe(400);
    expect(await probe()).toBe('off');
  });
});
