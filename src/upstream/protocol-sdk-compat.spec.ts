import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startFakeAnthropic, type FakeAnthropic } from '../../test/support/fake-anthropic-upstream';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fake-openai-upstream';
import {
  AnthropicStreamTranslator,
  toAnthropicRequest,
  toOpenAIChatCompletion,
} from './anthropic-translation';
import type { AnthropicMessage } from './anthropic-types';
import {
  anthropicMessageText,
  AnthropicStreamAccumulator,
  anthropicToChatRequest,
  chatCompletionToAnthropicMessage,
  chatCompletionToResponse,
  ChatToAnthropicStreamTranslator,
  ChatToResponsesStreamTranslator,
  RequestTranslationError,
  ResponsesStreamAccumulator,
  responseOutputText,
  responsesToChatRequest,
  toAnthropicErrorBody,
} from './protocol-translation';
import { UpstreamClient } from './upstream-client';

// The official clients are the judges of whether the translated protocols are well-formed. The tiny bridge below
// wires the translation functions between each client and a fake upstream; it is test scaffolding, not the proxy:
//   /messages-over-openai/v1/messages     Anthropic Messages in, chat completions to the fake OpenAI upstream
//   /responses-over-anthropic/v1/responses  OpenAI Responses in, via chat, Anthropic Messages to the fake Anthropic

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function messagesOverOpenAI(client: UpstreamClient, body: unknown, res: ServerResponse): Promise<void> {
  let chat;
  try {
    chat = anthropicToChatRequest(body);
  } catch (error) {
    if (!(error instanceof RequestTranslationError)) throw error;
    sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: error.message } });
    return;
  }
  const upstream = await client.send({
    method: 'POST',
    path: '/chat/completions',
    body: JSON.stringify(chat),
  });
  if (upstream.status >= 300) {
    sendJson(res, upstream.status, toAnthropicErrorBody(await upstream.body.json(), upstream.status));
    return;
  }
  if (chat.stream !== true) {
    sendJson(res, 200, chatCompletionToAnthropicMessage(await upstream.body.json()));
    return;
  }
  const translator = new ChatToAnthropicStreamTranslator({ model: chat.model });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  try {
    for await (const chunk of upstream.body) res.write(translator.push(chunk));
    res.end(translator.end());
  } catch {
    res.end(translator.fail('The upstream provider could not be reached.'));
  }
}

async function responsesOverAnthropic(
  client: UpstreamClient,
  body: unknown,
  res: ServerResponse,
): Promise<void> {
  let chat;
  try {
    chat = responsesToChatRequest(body);
  } catch (error) {
    if (!(error instanceof RequestTranslationError)) throw error;
    sendJson(res, 400, {
      error: {
        message: error.message,
        type: 'invalid_request_error',
        param: error.param,
        code: 'unsupported',
      },
    });
    return;
  }
  const upstream = await client.send({
    method: 'POST',
    path: '/messages',
    body: JSON.stringify(toAnthropicRequest(chat)),
  });
  if (chat.stream !== true) {
    const completion = toOpenAIChatCompletion((await upstream.body.json()) as AnthropicMessage);
    sendJson(res, 200, chatCompletionToResponse(completion, body));
    return;
  }
  const toChat = new AnthropicStreamTranslator({ model: chat.model, includeUsage: true });
  const toResponses = new ChatToResponsesStreamTranslator({ request: body });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  try {
    for await (const chunk of upstream.body) res.write(toResponses.push(toChat.push(chunk)));
    res.end(toResponses.push(toChat.end()) + toResponses.end());
  } catch {
    res.end(toResponses.fail('The upstream provider could not be reached.'));
  }
}

describe('protocol translations judged by the official clients', () => {
  let anthropicFake: FakeAnthropic;
  let openaiFake: FakeOpenAI;
  let toOpenAI: UpstreamClient;
  let toAnthropic: UpstreamClient;
  let server: Server;
  let bridge: string;

  beforeAll(async () => {
    anthropicFake = await startFakeAnthropic();
    openaiFake = await startFakeOpenAI();
    const timeouts = { timeoutMs: 2_000, streamIdleTimeoutMs: 2_000 };
    toOpenAI = new UpstreamClient({
      baseUrl: openaiFake.url,
      apiKey: 'sk-up',
      provider: 'openai',
      ...timeouts,
    });
    toAnthropic = new UpstreamClient({
      baseUrl: anthropicFake.url,
      apiKey: 'sk-ant',
      provider: 'anthropic',
      ...timeouts,
    });
    server = createServer((req, res) => {
      const route = async (): Promise<void> => {
        const body = await readJson(req);
        if (req.url === '/messages-over-openai/v1/messages') await messagesOverOpenAI(toOpenAI, body, res);
        else if (req.url === '/responses-over-anthropic/v1/responses')
          await responsesOverAnthropic(toAnthropic, body, res);
        else sendJson(res, 404, { error: { message: `no route ${req.url}` } });
      };
      route().catch((error: unknown) =>
        res.destroy(error instanceof Error ? error : new Error(String(error))),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    bridge = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => {
    anthropicFake.reset();
    openaiFake.reset();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await toOpenAI.destroy();
    await toAnthropic.destroy();
    await anthropicFake.close();
    await openaiFake.close();
  });

  describe('@anthropic-ai/sdk on Messages translated from an OpenAI-compatible upstream', () => {
    let sdk: Anthropic;
    beforeAll(() => {
      sdk = new Anthropic({ baseURL: `${bridge}/messages-over-openai`, apiKey: 'sk-service', maxRetries: 0 });
    });

    const weatherTool: Anthropic.Tool = {
      name: 'get_weather',
      description: 'Weather by city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    };

    it('reads a non-streamed answer, and the upstream got the chat translation', async () => {
      const message = await sdk.messages.create({
        model: 'gpt-fake',
        max_tokens: 200,
        system: [{ type: 'text', text: 'Be terse.' }],
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        metadata: { user_id: 'alice' },
      });

      expect(message.type).toBe('message');
      expect(message.content).toEqual([{ type: 'text', text: 'echo: Weather in Paris?' }]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.output_tokens).toBe(4);
      expect(message.usage.input_tokens).toBeGreaterThan(0);
      expect(openaiFake.requests[0].body).toEqual({
        model: 'gpt-fake',
        messages: [
          { role: 'system', content: 'Be terse.' },
          { role: 'user', content: 'Weather in Paris?' },
        ],
        max_completion_tokens: 200,
        user: 'alice',
      });
    });

    it('reads translated tool calls, non-streamed and streamed', async () => {
      const toolCall = {
        index: 0,
        id: 'call_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      };
      openaiFake.script({
        kind: 'json',
        body: {
          id: 'chatcmpl-t',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-fake',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'Checking.', refusal: null, tool_calls: [toolCall] },
              logprobs: null,
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 },
        },
      });
      const params = {
        model: 'gpt-fake',
        max_tokens: 100,
        tools: [weatherTool],
        messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
      };
      const message = await sdk.messages.create(params);
      expect(message.content).toEqual([
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      expect(message.stop_reason).toBe('tool_use');

      const chunk = (delta: unknown, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-fake', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
      openaiFake.script({
        kind: 'raw-sse',
        delayMs: 2,
        lines: [
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: 'Let me ' }),
          chunk({ content: 'check.' }),
          chunk({ tool_calls: [{ ...toolCall, function: { name: 'get_weather', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
          chunk({}, 'tool_calls'),
          `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-fake', choices: [], usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } })}\n\n`,
          'data: [DONE]\n\n',
        ],
      });
      const final = await sdk.messages.stream(params).finalMessage();
      expect(final.content).toEqual([
        expect.objectContaining({ type: 'text', text: 'Let me check.' }),
        expect.objectContaining({
          type: 'tool_use',
          id: 'call_1',
          name: 'get_weather',
          input: { city: 'Paris' },
        }),
      ]);
      expect(final.stop_reason).toBe('tool_use');
      expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 9 });
      expect(openaiFake.requests[1].body).toMatchObject({
        stream: true,
        stream_options: { include_usage: true },
      });
    });

    it('streams the text event by event through messages.create({ stream: true })', async () => {
      openaiFake.script({ kind: 'stream', chunks: ['Bon', 'jour ', 'à toi 🙂'], delayMs: 2 });
      const stream = await sdk.messages.create({
        model: 'gpt-fake',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'Salut' }],
      });
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
          text += event.delta.text;
      }
      expect(text).toBe('Bonjour à toi 🙂');
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    });

    it('surfaces an upstream error status in the Anthropic error classes', async () => {
      openaiFake.script({ kind: 'error', status: 429 });
      const failure = await sdk.messages
        .create({ model: 'gpt-fake', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.RateLimitError);
      expect((failure as InstanceType<typeof Anthropic.RateLimitError>).message).toMatch(/Scripted failure/);
    });

    it('surfaces an in-stream error as a thrown APIError', async () => {
      openaiFake.script({
        kind: 'raw-sse',
        lines: [
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'par' }, finish_reason: null }] })}\n\n`,
          `data: ${JSON.stringify({ error: { message: 'The server had an error', type: 'server_error' } })}\n\n`,
        ],
      });
      const consume = async (): Promise<void> => {
        const stream = await sdk.messages.create({
          model: 'gpt-fake',
          max_tokens: 10,
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        });
        for await (const _event of stream) {
          // drain
        }
      };
      await expect(consume()).rejects.toThrow(/The server had an error/);
    });

    it('answers an untranslatable request with 400 in the Anthropic shape', async () => {
      const failure = await sdk.messages
        .create({
          model: 'gpt-fake',
          max_tokens: 10,
          tools: [{ type: 'web_search_20250305', name: 'web_search' }],
          messages: [{ role: 'user', content: 'x' }],
        })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
      expect(openaiFake.requests).toHaveLength(0);
    });
  });

  describe('side readers of verbatim streams agree with the official clients', () => {
    it('AnthropicStreamAccumulator reads what @anthropic-ai/sdk reads from the fake Anthropic upstream', async () => {
      anthropicFake.script({ kind: 'message', text: ['Grüß ', 'dich 🙂'], delayMs: 1 });
      const sdk = new Anthropic({
        baseURL: anthropicFake.url.replace(/\/v1$/, ''),
        apiKey: 'sk-ant',
        maxRetries: 0,
      });
      const final = await sdk.messages
        .stream({ model: 'claude-fake-large', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage();
      expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Grüß dich 🙂' })]);

      anthropicFake.script({ kind: 'message', text: ['Grüß ', 'dich 🙂'] });
      const raw = await toAnthropic.send({
        method: 'POST',
        path: '/messages',
        body: JSON.stringify({ model: 'claude-fake-large', max_tokens: 20, stream: true, messages: [] }),
      });
      const accumulator = new AnthropicStreamAccumulator();
      for await (const chunk of raw.body) accumulator.push(chunk);
      accumulator.end();
      expect(accumulator.completed).toBe(true);
      expect(accumulator.text).toBe(anthropicMessageText(final));
    });

    it('ResponsesStreamAccumulator reads what openai reads from the fake OpenAI upstream', async () => {
      const sdk = new OpenAI({ baseURL: openaiFake.url, apiKey: 'sk-up', maxRetries: 0 });
      const final = await sdk.responses
        .stream({ model: 'fake-model', input: 'Olá, mundo 🙂' })
        .finalResponse();
      const raw = await toOpenAI.send({
        method: 'POST',
        path: '/responses',
        body: JSON.stringify({ model: 'fake-model', input: 'Olá, mundo 🙂', stream: true }),
      });
      const accumulator = new ResponsesStreamAccumulator();
      for await (const chunk of raw.body) accumulator.push(chunk);
      accumulator.end();
      expect(accumulator.completed).toBe(true);
      expect(accumulator.text).toBe(final.output_text);
      expect(responseOutputText(final)).toBe(final.output_text);
    });
  });

  describe('openai responses.create on Responses translated from the Anthropic upstream', () => {
    let sdk: OpenAI;
    beforeAll(() => {
      sdk = new OpenAI({
        baseURL: `${bridge}/responses-over-anthropic/v1`,
        apiKey: 'sk-service',
        maxRetries: 0,
      });
    });

    it('reads a non-streamed response; the upstream got the instructions as system', async () => {
      const response = await sdk.responses.create({
        model: 'claude-fake-large',
        instructions: 'Be terse.',
        input: 'What is my name?',
        max_output_tokens: 300,
      });
      expect(response.object).toBe('response');
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('echo: What is my name?');
      expect(response.instructions).toBe('Be terse.');
      expect(response.usage).toMatchObject({ output_tokens: 5 });
      expect(anthropicFake.requests[0].body).toMatchObject({
        system: 'Be terse.',
        max_tokens: 300,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is my name?' }] }],
      });
    });

    it('reads function calls and sends tool results back', async () => {
      anthropicFake.script({
        kind: 'message',
        text: ['Checking.'],
        toolUses: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
      });
      const tools: OpenAI.Responses.Tool[] = [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather by city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          strict: false,
        },
      ];
      const first = await sdk.responses.create({
        model: 'claude-fake-large',
        input: 'Weather in Paris?',
        tools,
      });
      const call = first.output.find((item) => item.type === 'function_call');
      expect(call).toMatchObject({ call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' });
      expect(first.output_text).toBe('Checking.');

      const second = await sdk.responses.create({
        model: 'claude-fake-large',
        tools,
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          ...first.output.map((item) => item as OpenAI.Responses.ResponseInputItem),
          { type: 'function_call_output', call_id: 'toolu_1', output: '18°C and sunny' },
        ],
      });
      expect(second.output_text).toBe('echo: ');
      expect(anthropicFake.requests[1].body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C and sunny' }],
        },
      ]);
    });

    it('assembles a streamed response from the typed events', async () => {
      anthropicFake.script({
        kind: 'message',
        text: ['Hel', 'lo, ', 'wörld 🙂'],
        toolUses: [{ id: 'toolu_9', name: 'now', input: { tz: 'UTC' }, jsonPieces: ['{"tz"', ':"UTC"}'] }],
        usage: { input_tokens: 30, output_tokens: 12 },
        delayMs: 2,
      });
      const stream = sdk.responses.stream({ model: 'claude-fake-large', input: 'Say hello' });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
      const final = await stream.finalResponse();

      expect(deltas).toEqual(['Hel', 'lo, ', 'wörld 🙂']);
      expect(final.status).toBe('completed');
      expect(final.output_text).toBe('Hello, wörld 🙂');
      expect(final.output.find((item) => item.type === 'function_call')).toMatchObject({
        call_id: 'toolu_9',
        name: 'now',
        arguments: '{"tz":"UTC"}',
      });
      expect(final.usage).toMatchObject({ input_tokens: 30, output_tokens: 12, total_tokens: 42 });
    });

    it('surfaces an upstream stream error as a thrown APIError after the partial text', async () => {
      anthropicFake.script({ kind: 'message', text: ['partial'], then: 'error' });
      const stream = await sdk.responses.create({ model: 'claude-fake-large', input: 'x', stream: true });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      const consume = async (): Promise<void> => {
        for await (const event of stream) events.push(event);
      };
      await expect(consume()).rejects.toBeInstanceOf(OpenAI.APIError);
      await expect(consume()).rejects.toThrow();
      expect(
        events.filter((event) => event.type === 'response.output_text.delta').map((e) => e.delta),
      ).toEqual(['partial']);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    });
  });

  describe('Vercel AI SDK with the default openai(model) provider (Responses)', () => {
    it('generateText and streamText read the fake upstream’s verbatim Responses answer', async () => {
      const openai = createOpenAI({ baseURL: openaiFake.url, apiKey: 'sk-up' });
      const generated = await generateText({
        model: openai('fake-model'),
        system: 'Be terse.',
        prompt: 'Where do I live?',
      });
      expect(generated.text).toBe('echo: Where do I live?');
      expect(generated.usage.outputTokens).toBe(5);
      expect(openaiFake.requests[0].path).toBe('/v1/responses');
      expect(openaiFake.requests[0].body.input[0]).toEqual({ role: 'system', content: 'Be terse.' });

      const streamed = streamText({ model: openai('fake-model'), prompt: 'Stream please' });
      let text = '';
      for await (const piece of streamed.textStream) text += piece;
      expect(text).toBe('echo: Stream please');
      expect(await streamed.finishReason).toBe('stop');
    });

    it('generateText and streamText read Responses translated from the Anthropic upstream', async () => {
      const openai = createOpenAI({ baseURL: `${bridge}/responses-over-anthropic/v1`, apiKey: 'sk-service' });
      const generated = await generateText({ model: openai('claude-fake-large'), prompt: 'Who am I?' });
      expect(generated.text).toBe('echo: Who am I?');
      expect(generated.finishReason).toBe('stop');

      anthropicFake.script({ kind: 'message', text: ['One ', 'two ', 'three'], delayMs: 2 });
      const streamed = streamText({ model: openai('claude-fake-large'), prompt: 'Count' });
      const pieces: string[] = [];
      for await (const piece of streamed.textStream) pieces.push(piece);
      expect(pieces.join('')).toBe('One two three');
      expect(await streamed.finishReason).toBe('stop');
      expect((await streamed.usage).outputTokens).toBeGreaterThan(0);
    });

    it('streamText reports an upstream stream error as an error', async () => {
      anthropicFake.script({ kind: 'message', text: ['partial'], then: 'error' });
      const openai = createOpenAI({ baseURL: `${bridge}/responses-over-anthropic/v1`, apiKey: 'sk-service' });
      const errors: unknown[] = [];
      const streamed = streamText({
        model: openai('claude-fake-large'),
        prompt: 'x',
        onError: ({ error }) => {
          errors.push(error);
        },
      });
      let text = '';
      for await (const piece of streamed.textStream) text += piece;
      expect(text).toBe('partial');
      expect(errors).toEqual([
        expect.objectContaining({ error: expect.objectContaining({ message: 'Overloaded' }) }),
      ]);
      // The AI SDK reports the error event through onError and does not count the answer as finished.
      expect(await streamed.finishReason).not.toBe('stop');
    });

    it('runs a tool call over the translated Responses stream (with store: false, as there is no server state)', async () => {
      const openai = createOpenAI({ baseURL: `${bridge}/responses-over-anthropic/v1`, apiKey: 'sk-service' });
      const weather = tool({
        description: 'Weather by city',
        inputSchema: jsonSchema<{ city: string }>({
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        }),
        execute: ({ city }) => Promise.resolve(`sunny in ${city}`),
      });
      const run = async (providerOptions?: { openai: { store: boolean } }) => {
        const errors: unknown[] = [];
        const streamed = streamText({
          model: openai('claude-fake-large'),
          prompt: 'Weather in Lyon?',
          tools: { weather },
          providerOptions,
          stopWhen: ({ steps }) => steps.length >= 2,
          onError: ({ error }) => {
            errors.push(error);
          },
        });
        let text = '';
        for await (const piece of streamed.textStream) text += piece;
        return { text, errors };
      };

      // By default the AI SDK refers back to earlier output items by id (item_reference), which needs the
      // stored responses a translated upstream does not have: a 400 that names the item.
      anthropicFake.script({
        kind: 'message',
        toolUses: [{ id: 'toolu_w', name: 'weather', input: { city: 'Lyon' } }],
      });
      const byReference = await run();
      expect(byReference.text).toBe('');
      expect(String((byReference.errors[0] as { responseBody?: string }).responseBody)).toMatch(
        /"param":"input\[1\]\.type".*item_reference|item_reference.*"param":"input\[1\]\.type"/,
      );
      expect(anthropicFake.requests).toHaveLength(1);

      anthropicFake.reset();
      anthropicFake.script(
        { kind: 'message', toolUses: [{ id: 'toolu_w', name: 'weather', input: { city: 'Lyon' } }] },
        { kind: 'message', text: ['It is sunny in Lyon.'] },
      );
      const byValue = await run({ openai: { store: false } });
      expect(byValue.errors).toEqual([]);
      expect(byValue.text).toBe('It is sunny in Lyon.');
      expect(anthropicFake.requests[1].body.messages.at(-1)).toEqual({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_w', content: expect.stringContaining('sunny in Lyon') },
        ],
      });
    });
  });
});
