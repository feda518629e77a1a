import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { anthropicClient, bodiesSentTo, openaiClient, storedTurns } from './support/clients';
import { expectEnvelope, makeProfileWith } from './support/factories';
import { TestApp, useTestApp } from './support/test-app';

const SERVICE_KEY = 'svc-key-for-protocol-tests';
const CONTEXT_OPENING = '[User profile from the memory service.';

/** A profile with a trait the context will carry, so its injection can be seen upstream. */
const knownUser = (t: TestApp, userId: string) =>
  makeProfileWith(t, { externalId: userId, traits: { name: 'Ada' } });

describe('Every client protocol against an OpenAI-compatible upstream', () => {
  const t = useTestApp({ upstream: 'openai', serviceKey: SERVICE_KEY });
  let seq = 0;
  const nextUser = () => `protocol-user-${++seq}`;
  const upstreamBodies = (path: string) => bodiesSentTo(t.upstream, path);

  describe('POST /v1/responses (openai client, Vercel AI SDK)', () => {
    const openai = (userId: string) => openaiClient(t, userId);

    it('adds the context to the instructions, relays the answer, and learns the turn once', async () => {
      const userId = nextUser();
      await knownUser(t, userId);
      const response = await openai(userId).responses.create({
        model: 'fake-model',
        instructions: 'Be brief.',
        input: 'My favourite colour is green.',
        store: false,
      });
      expect(response.output_text).toBe('echo: My favourite colour is green.');
      const [sent] = upstreamBodies('/v1/responses');
      expect(sent.instructions.startsWith('Be brief.\n\n' + CONTEXT_OPENING)).toBe(true);
      expect(sent.instructions).toContain('Ada');
      expect(sent.store).toBe(false); // every other field verbatim
      expect(sent.service).toBeUndefined();
      expect(await storedTurns(t, userId)).toEqual([
        ['user', 'My favourite colour is green.'],
        ['assistant', 'echo: My favourite colour is green.'],
      ]);
    });

    it('streams the typed events as they come and learns once response.completed arrived', async () => {
      const userId = nextUser();
      await knownUser(t, userId);
      const stream = await openai(userId).responses.create({
        model: 'fake-model',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Tell me a story' }] }],
        stream: true,
      });
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      expect(text).toBe('echo: Tell me a story');
      expect(types[0]).toBe('response.created');
      expect(types.at(-1)).toBe('response.completed');
      expect(upstreamBodies('/v1/responses')[0].instructions).toContain(CONTEXT_OPENING);
      expect(await storedTurns(t, userId)).toEqual([
        ['user', 'Tell me a story'],
        ['assistant', 'echo: Tell me a story'],
      ]);
    });

    it('does not learn a response that failed or was cut', async () => {
      for (const then of ['failed', 'disconnect'] as const) {
        const userId = nextUser();
        t.upstream.scriptResponses({ kind: 'response', text: ['half ', 'an answer'], then });
        const res = await t
          .api()
          .post('/v1/responses')
          .set('Authorization', `Bearer ${SERVICE_KEY}`)
          .set('X-Service-Id', userId)
          .send({ model: 'fake-model', input: 'Hello', stream: true })
          .expect(200);
        expect(res.text).toContain('half ');
        expect(await storedTurns(t, userId)).toEqual([]);
      }
    });

    it('serves the Vercel AI SDK default provider (generateText and streamText)', async () => {
      const userId = nextUser();
      const provider = createOpenAI({
        baseURL: `${t.url}/v1`,
        apiKey: SERVICE_KEY,
        headers: { 'X-Service-Id': userId },
      });
      const generated = await generateText({ model: provider('fake-model'), prompt: 'Hi there' });
      expect(generated.text).toBe('echo: Hi there');
      const streamed = streamText({ model: provider('fake-model'), prompt: 'Stream please' });
      let text = '';
      for await (const piece of streamed.textStream) text += piece;
      expect(text).toBe('echo: Stream please');
      expect(t.upstream.requests.every((r) => r.path === '/v1/responses')).toBe(true);
      const turns = await storedTurns(t, userId);
      expect(turns.filter(([role]) => role === 'user').map(([, content]) => content)).toEqual([
        'Hi there',
        'Stream please',
      ]);
    });

    it.each([
      ['a body that is a list', [1], 'invalid_json'],
      ['no model', { input: 'x' }, 'invalid_model'],
      ['input as a number', { model: 'm', input: 5 }, 'invalid_input'],
      ['instructions as an object', { model: 'm', input: 'x', instructions: {} }, 'invalid_instructions'],
      [
        'a service option of the wrong type',
        { model: 'm', input: 'x', service: { skipInjection: 'yes' } },
        'invalid_service',
      ],
      ['a numeric user id', { model: 'm', input: 'x', user: 5 }, 'invalid_user_id'],
      ['no user id at all', { model: 'm', input: 'x' }, 'missing_user_id'],
    ])('answers 400 in the envelope for %s', async (_label, body, code) => {
      const res = await t
        .api()
        .post('/v1/responses')
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .send(body as object)
        .expect(400);
      expectEnvelope(res.body, code);
      expect(t.upstream.requests).toHaveLength(0);
    });
  });

  describe('POST /v1/messages, translated to chat completions (Anthropic SDK)', () => {
    const anthropic = (userId: string) => anthropicClient(t, userId);

    it('takes the service key as x-api-key, adds the context to system, and answers a Message', async () => {
      const userId = nextUser();
      await knownUser(t, userId);
      const message = await anthropic(userId).messages.create({
        model: 'fake-model',
        max_tokens: 100,
        system: 'Be kind.',
        messages: [{ role: 'user', content: 'My name is Ada Lovelace.' }],
      });
      expect(message.type).toBe('message');
      expect(message.content).toEqual([{ type: 'text', text: 'echo: My name is Ada Lovelace.' }]);
      expect(message.stop_reason).toBe('end_turn');
      const [sent] = upstreamBodies('/v1/chat/completions');
      expect(sent.messages[0].role).toBe('system');
      expect(sent.messages[0].content.startsWith('Be kind.\n\n' + CONTEXT_OPENING)).toBe(true);
      expect(t.upstream.requests[0].headers.authorization).toBe('Bearer sk-upstream');
      expect(JSON.stringify(t.upstream.requests[0].headers)).not.toContain(SERVICE_KEY);
      expect(await storedTurns(t, userId)).toEqual([
        ['user', 'My name is Ada Lovelace.'],
        ['assistant', 'echo: My name is Ada Lovelace.'],
      ]);
    });

    it('streams the Messages events and learns once the stream completed', async () => {
      const userId = nextUser();
      const stream = anthropic(userId).messages.stream({
        model: 'fake-model',
        max_tokens: 100,
        system: [{ type: 'text', text: 'Be kind.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Stream to me' }] }],
      });
      const types: string[] = [];
      stream.on('streamEvent', (event) => types.push(event.type));
      const final = await stream.finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'echo: Stream to me' }]);
      expect(types[0]).toBe('message_start');
      expect(types).toContain('content_block_delta');
      expect(types.at(-1)).toBe('message_stop');
      expect(await storedTurns(t, userId)).toEqual([
        ['user', 'Stream to me'],
        ['assistant', 'echo: Stream to me'],
      ]);
    });

    it('does not learn a stream the upstream broke off, and says so in an Anthropic error event', async () => {
      const userId = nextUser();
      t.upstream.script({ kind: 'stream', chunks: ['half ', 'an'], then: 'disconnect' });
      const res = await t
        .api()
        .post('/v1/messages')
        .set('x-api-key', SERVICE_KEY)
        .set('X-Service-Id', userId)
        .send({
          model: 'fake-model',
          max_tokens: 10,
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        })
        .expect(200);
      expect(res.text).toContain('event: error');
      expect(res.text).not.toContain('message_stop');
      expect(await storedTurns(t, userId)).toEqual([]);
    });

    it.each([
      [
        'no user id',
        {},
        { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
        400,
        'missing_user_id',
      ],
      [
        'a system role in messages',
        { 'X-Service-Id': 'u' },
        { model: 'm', messages: [{ role: 'system', content: 'x' }] },
        400,
        'invalid_messages',
      ],
      [
        'content as a number',
        { 'X-Service-Id': 'u' },
        { model: 'm', messages: [{ role: 'user', content: 5 }] },
        400,
        'invalid_messages',
      ],
      [
        'system as a number',
        { 'X-Service-Id': 'u' },
        { model: 'm', system: 1, messages: [{ role: 'user', content: 'x' }] },
        400,
        'invalid_system',
      ],
      [
        'top_k, which chat completions cannot express',
        { 'X-Service-Id': 'u' },
        { model: 'm', top_k: 3, messages: [{ role: 'user', content: 'x' }] },
        400,
        'unsupported_for_provider',
      ],
    ])('answers %s in Anthropic’s error shape', async (_label, headers, body, status, code) => {
      const res = await t.api().post('/v1/messages').set('x-api-key', SERVICE_KEY).set(headers).send(body);
      expect(res.status).toBe(status);
      expect(res.body).toEqual({
        type: 'error',
        error: expect.objectContaining({ type: 'invalid_request_error', code, message: expect.any(String) }),
      });
    });

    it('answers a wrong key with 401 in Anthropic’s shape, which the SDK reads as an AuthenticationError', async () => {
      const client = new Anthropic({ apiKey: 'wrong', baseURL: t.url, maxRetries: 0 });
      const error = await client.messages
        .create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((error as InstanceType<typeof Anthropic.AuthenticationError>).error).toEqual({
        type: 'error',
        error: expect.objectContaining({ type: 'authentication_error', code: 'invalid_api_key' }),
      });
    });
  });

  describe('POST /v1/embeddings', () => {
    it('relays the embeddings verbatim with the upstream key, and stores nothing', async () => {
      const client = openaiClient(t, null);
      const result = await client.embeddings.create({ model: 'embed-model', input: ['a', 'b'] });
      expect(result.data).toHaveLength(2);
      expect(result.data[0].embedding).toHaveLength(8);
      const sent = t.upstream.requests.find((r) => r.path === '/v1/embeddings')!;
      expect(sent.body.input).toEqual(['a', 'b']);
      expect(sent.headers.authorization).toBe('Bearer sk-upstream');
      const profiles = await t.admin().get('/api/profiles?search=protocol-user').expect(200);
      const before = profiles.body.total as number;
      await client.embeddings.create({ model: 'embed-model', input: 'c' });
      expect((await t.admin().get('/api/profiles?search=protocol-user').expect(200)).body.total).toBe(before);
    });
  });
});

describe('Every client protocol against an Anthropic upstream', () => {
  const t = useTestApp({ upstream: 'anthropic', upstreamKey: 'sk-ant', serviceKey: SERVICE_KEY });
  let seq = 0;
  const nextUser = () => `anthropic-protocol-user-${++seq}`;
  const sentMessages = () => bodiesSentTo(t.upstream, '/v1/messages');

  it('relays /v1/messages verbatim, with the context in system and the client’s beta header', async () => {
    const userId = nextUser();
    await knownUser(t, userId);
    const client = anthropicClient(t, userId, { 'anthropic-beta': 'some-beta-2025' });
    const message = await client.messages.create({
      model: 'claude-fake-large',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'echo: Hello' }]);
    const [sent] = sentMessages();
    expect(sent.system.startsWith(CONTEXT_OPENING)).toBe(true);
    expect(sent.max_tokens).toBe(50);
    expect(t.upstream.requests[0].headers['x-api-key']).toBe('sk-ant');
    expect(t.upstream.requests[0].headers['anthropic-beta']).toBe('some-beta-2025');

    const stream = client.messages.stream({
      model: 'claude-fake-large',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Again, streamed' }],
    });
    expect((await stream.finalMessage()).content).toEqual([{ type: 'text', text: 'echo: Again, streamed' }]);
    const turns = await storedTurns(t, userId);
    expect(turns.map(([role]) => role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('does not learn a Messages stream that ended with an error event', async () => {
    const userId = nextUser();
    t.upstream.script({ kind: 'message', text: ['half'], then: 'error' });
    const res = await t
      .api()
      .post('/v1/messages')
      .set('x-api-key', SERVICE_KEY)
      .set('X-Service-Id', userId)
      .send({
        model: 'claude-fake-large',
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      })
      .expect(200);
    expect(res.text).toContain('event: error');
    expect(await storedTurns(t, userId)).toEqual([]);
  });

  it('translates /v1/responses both ways, streamed or not', async () => {
    const userId = nextUser();
    await knownUser(t, userId);
    const openai = openaiClient(t, userId);
    const response = await openai.responses.create({
      model: 'claude-fake-large',
      input: 'Hi',
      instructions: 'Short.',
    });
    expect(response.output_text).toBe('echo: Hi');
    expect(response.status).toBe('completed');
    expect(sentMessages()[0].system.startsWith('Short.\n\n' + CONTEXT_OPENING)).toBe(true);

    const stream = await openai.responses.create({
      model: 'claude-fake-large',
      input: 'Streamed hi',
      stream: true,
    });
    let text = '';
    let last = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      last = event.type;
    }
    expect(text).toBe('echo: Streamed hi');
    expect(last).toBe('response.completed');
    const turns = await storedTurns(t, userId);
    expect(turns.filter(([role]) => role === 'user').map(([, c]) => c)).toEqual(['Hi', 'Streamed hi']);
  });

  it('answers /v1/embeddings with 400 unsupported_for_provider', async () => {
    const res = await t
      .api()
      .post('/v1/embeddings')
      .set('Authorization', `Bearer ${SERVICE_KEY}`)
      .send({ model: 'x', input: 'y' })
      .expect(400);
    expectEnvelope(res.body, 'unsupported_for_provider');
  });
});
