import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startFakeAnthropic, type FakeAnthropic } from '../../test/support/fake-anthropic-upstream';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fake-openai-upstream';
import {
  AnthropicStreamTranslator,
  toAnthropicRequest,
  toOpenAIChatCompletion,
  toOpenAIModelList,
} from './anthropic-translation';
import type { AnthropicMessage, AnthropicModelList } from './anthropic-types';
import type { OpenAIChatRequest } from './openai-types';
import { UpstreamClient } from './upstream-client';

// The official OpenAI SDK is the judge of whether our translated output is well-formed. The tiny bridge below wires
// the translation functions between it and the fake Anthropic upstream; it is test scaffolding, not the proxy.

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

async function bridge(client: UpstreamClient, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET' && req.url === '/v1/models') {
    const upstream = await client.send({ method: 'GET', path: '/models' });
    const list = toOpenAIModelList((await upstream.body.json()) as AnthropicModelList);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(list));
    return;
  }
  const openAIRequest = (await readJson(req)) as OpenAIChatRequest;
  const upstream = await client.send({
    method: 'POST',
    path: '/messages',
    body: JSON.stringify(toAnthropicRequest(openAIRequest)),
  });
  if (openAIRequest.stream !== true) {
    const completion = toOpenAIChatCompletion((await upstream.body.json()) as AnthropicMessage);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
    return;
  }
  const translator = new AnthropicStreamTranslator({
    model: openAIRequest.model,
    includeUsage: openAIRequest.stream_options?.include_usage === true,
  });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for await (const chunk of upstream.body) res.write(translator.push(chunk));
  res.end(translator.end());
}

describe('OpenAI SDK compatibility', () => {
  let anthropic: FakeAnthropic;
  let openaiFake: FakeOpenAI;
  let upstreamClient: UpstreamClient;
  let server: Server;
  let sdk: OpenAI;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    openaiFake = await startFakeOpenAI();
    upstreamClient = new UpstreamClient({
      baseUrl: anthropic.url,
      apiKey: 'sk-ant',
      provider: 'anthropic',
      timeoutMs: 2_000,
      streamIdleTimeoutMs: 2_000,
    });
    server = createServer((req, res) => {
      bridge(upstreamClient, req, res).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    sdk = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  });

  afterEach(() => {
    anthropic.reset();
    openaiFake.reset();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await upstreamClient.destroy();
    await anthropic.close();
    await openaiFake.close();
  });

  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be terse.' },
    { role: 'user', content: 'Weather in Paris?' },
  ];

  it('accepts a translated non-streaming completion with tool calls', async () => {
    anthropic.script({
      kind: 'message',
      text: ['Checking.'],
      toolUses: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
    });
    const completion = await sdk.chat.completions.create({ model: 'claude-fake-large', messages });

    expect(completion.choices[0].message.content).toBe('Checking.');
    expect(completion.choices[0].message.tool_calls).toEqual([
      { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(anthropic.requests[0].body).toMatchObject({ system: 'Be terse.', max_tokens: 4096 });
  });

  it('accumulates a translated stream with text, tool calls and usage through the SDK stream helper', async () => {
    anthropic.script({
      kind: 'message',
      text: ['Let me ', 'check ', 'that.'],
      toolUses: [
        {
          id: 'toolu_1',
          name: 'get_weather',
          input: { city: 'Paris', unit: 'C' },
          jsonPieces: ['{"city"', ': "Paris", ', '"unit": "C"}'],
        },
        { id: 'toolu_2', name: 'get_time', input: {} },
      ],
      usage: { input_tokens: 30, output_tokens: 12 },
      delayMs: 5,
    });
    const stream = sdk.chat.completions.stream({
      model: 'claude-fake-large',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();

    expect(final.choices[0].message.content).toBe('Let me check that.');
    expect(
      final.choices[0].message.tool_calls?.map((call) => [call.id, call.type, call.function.name]),
    ).toEqual([
      ['toolu_1', 'function', 'get_weather'],
      ['toolu_2', 'function', 'get_time'],
    ]);
    expect(JSON.parse(final.choices[0].message.tool_calls?.[0].function.arguments ?? '')).toEqual({
      city: 'Paris',
      unit: 'C',
    });
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
  });

  it('surfaces an upstream stream error as an SDK error', async () => {
    anthropic.script({ kind: 'message', text: ['partial'], then: 'error' });
    const consume = async (): Promise<void> => {
      const stream = await sdk.chat.completions.create({
        model: 'claude-fake-large',
        messages,
        stream: true,
      });
      for await (const _chunk of stream) {
        // drain
      }
    };
    await expect(consume()).rejects.toThrow(/Overloaded/);
  });

  it('accepts the translated model list', async () => {
    const page = await sdk.models.list();
    expect(page.data.map((model) => [model.id, model.owned_by])).toEqual([
      ['claude-fake-large', 'anthropic'],
      ['claude-fake-small', 'anthropic'],
    ]);
  });

  it('accepts the fake OpenAI upstream stream format, so tests built on the fake are realistic', async () => {
    openaiFake.script({ kind: 'stream', chunks: ['Hel', 'lo'] });
    const direct = new OpenAI({ baseURL: openaiFake.url, apiKey: 'sk-test', maxRetries: 0 });
    const final = await direct.chat.completions
      .stream({ model: 'fake-model', messages, stream: true, stream_options: { include_usage: true } })
      .finalChatCompletion();

    expect(final.choices[0].message.content).toBe('Hello');
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('accepts the fake OpenAI upstream default completion and embeddings', async () => {
    const direct = new OpenAI({ baseURL: openaiFake.url, apiKey: 'sk-test', maxRetries: 0 });
    const completion = await direct.chat.completions.create({ model: 'fake-model', messages });
    expect(completion.choices[0].message.content).toBe('echo: Weather in Paris?');

    const embeddings = await direct.embeddings.create({
      model: 'fake-embed',
      input: ['a', 'b', 'a'],
      dimensions: 16,
    });
    const vectors = embeddings.data.map((item) => item.embedding);
    expect(vectors.every((vector) => vector.length === 16)).toBe(true);
    expect(vectors[0]).toEqual(vectors[2]);
    expect(vectors[0]).not.toEqual(vectors[1]);
    expect(Math.hypot(...vectors[0])).toBeCloseTo(1, 6);
  });
});
