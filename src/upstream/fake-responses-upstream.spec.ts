import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fake-openai-upstream';
import { ResponsesStreamAccumulator, responseOutputText } from './responses-stream-accumulator';
import { parseSseStream } from './sse';
import { UpstreamClient, UpstreamTimeoutError, type UpstreamResponse } from './upstream-client';

// Contract tests for `POST /v1/responses` of the fake OpenAI upstream, which the proxy's e2e tests rely on;
// the official client checks that its answers and events are shaped like the real API's.

describe('fake OpenAI upstream: Responses', () => {
  let fake: FakeOpenAI;
  let client: UpstreamClient;
  let sdk: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ requireApiKey: 'sk-k' });
    client = new UpstreamClient({
      baseUrl: fake.url,
      apiKey: 'sk-k',
      timeoutMs: 1_000,
      streamIdleTimeoutMs: 300,
    });
    sdk = new OpenAI({ baseURL: fake.url, apiKey: 'sk-k', maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await client.destroy();
    await fake.close();
  });

  const send = (body: Record<string, unknown>): Promise<UpstreamResponse> =>
    client.send({
      method: 'POST',
      path: '/responses',
      body: JSON.stringify({ model: 'fake-model', ...body }),
    });

  async function accumulate(response: UpstreamResponse): Promise<ResponsesStreamAccumulator> {
    const accumulator = new ResponsesStreamAccumulator();
    try {
      for await (const chunk of response.body) accumulator.push(chunk);
    } catch {
      // a cut stream: what arrived is what the accumulator has
    }
    accumulator.end();
    return accumulator;
  }

  it('echoes the last user input and the instructions it received, by default', async () => {
    const response = await sdk.responses.create({
      model: 'fake-model',
      instructions: 'About the user: likes tea.',
      input: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'reply' },
        { role: 'user', content: [{ type: 'input_text', text: 'What do I like?' }] },
      ],
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      instructions: 'About the user: likes tea.',
      model: 'fake-model',
    });
    expect(response.output_text).toBe('echo: What do I like?');
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    expect(fake.requests[0]).toMatchObject({
      path: '/v1/responses',
      body: { instructions: 'About the user: likes tea.' },
    });
  });

  it('streams the echo as typed events that the official client assembles', async () => {
    const stream = sdk.responses.stream({ model: 'fake-model', input: 'ping pong' });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('echo: ping pong');
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_text.delta');

    const accumulator = await accumulate(await send({ input: 'ping pong', stream: true }));
    expect(accumulator.completed).toBe(true);
    expect(accumulator.text).toBe('echo: ping pong');
  });

  it('numbers every event from 0 and names it in the event line', async () => {
    const events = [];
    for await (const event of parseSseStream((await send({ input: 'x', stream: true })).body))
      events.push(event);
    expect(events.map((event) => JSON.parse(event.data).sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.every((event) => JSON.parse(event.data).type === event.event)).toBe(true);
  });

  it('scripts function calls, streamed and not', async () => {
    const script = {
      kind: 'response' as const,
      text: ['Checking.'],
      functionCalls: [
        {
          callId: 'call_1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          argumentPieces: ['{"city":', '"Paris"}'],
        },
      ],
    };
    fake.scriptResponses(script, script);
    const whole = await sdk.responses.create({ model: 'fake-model', input: 'x' });
    expect(whole.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    const streamed = await sdk.responses.stream({ model: 'fake-model', input: 'x' }).finalResponse();
    expect(streamed.output[1]).toMatchObject({
      type: 'function_call',
      call_id: 'call_1',
      arguments: '{"city":"Paris"}',
    });
    expect(streamed.output_text).toBe('Checking.');
  });

  it('scripts an incomplete response', async () => {
    fake.scriptResponses(
      { kind: 'response', text: ['cut'], status: 'incomplete' },
      { kind: 'response', text: ['cut'], status: 'incomplete' },
    );
    const whole = (await (await send({ input: 'x' })).body.json()) as Record<string, unknown>;
    expect(whole).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    expect(responseOutputText(whole)).toBe('cut');
    const accumulator = await accumulate(await send({ input: 'x', stream: true }));
    expect(accumulator.outcome).toBe('incomplete');
    expect(accumulator.answered).toBe(true);
  });

  it.each([
    ['failed', 'failed'],
    ['error', 'error'],
    ['disconnect', 'cut'],
  ] as const)("ends a stream scripted with then: '%s' as %s", async (then, outcome) => {
    fake.scriptResponses({ kind: 'response', text: ['par', 'tial'], then });
    const accumulator = await accumulate(await send({ input: 'x', stream: true }));
    expect(accumulator.outcome).toBe(outcome);
    expect(accumulator.completed).toBe(false);
    expect(accumulator.text).toBe('partial');
  });

  it("stops writing for then: 'hang', so the client's idle timeout fires", async () => {
    fake.scriptResponses({ kind: 'response', text: ['x'], then: 'hang' });
    const response = await send({ input: 'x', stream: true });
    const read = async (): Promise<void> => {
      for await (const _chunk of response.body) {
        // wait
      }
    };
    await expect(read()).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
  });

  it('scripts an error status and a hang before headers', async () => {
    fake.scriptResponses({ kind: 'error', status: 500 }, { kind: 'hang' });
    const failed = await send({ input: 'x' });
    expect(failed.status).toBe(500);
    expect(await failed.body.json()).toMatchObject({ error: { type: 'server_error' } });
    await expect(send({ input: 'x' })).rejects.toBeInstanceOf(UpstreamTimeoutError);
  });
});
