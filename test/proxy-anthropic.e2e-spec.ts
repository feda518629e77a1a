import { APIError } from 'openai';
import { expectEnvelope, makeProfile, putTrait } from './support/factories';
import { useTestApp } from './support/test-app';
import { bodiesSentTo, openaiClient } from './support/clients';

const ANTHROPIC_KEY = 'sk-ant-test';

/** The proxy with UPSTREAM_PROVIDER=anthropic: OpenAI requests in, Messages API out, and back. */
describe('Proxy with an Anthropic upstream', () => {
  const t = useTestApp({
    upstream: 'anthropic',
    upstreamKey: ANTHROPIC_KEY,
    env: { UPSTREAM_TIMEOUT_MS: '1500' },
  });
  const client = (userId: string) => openaiClient(t, userId);
  const lastMessagesBody = () => bodiesSentTo(t.upstream, '/v1/messages').at(-1);

  it('translates a chat request, with the injected context as the system prompt, and the answer back', async () => {
    const profile = await makeProfile(t, 'anthropic-user');
    await putTrait(t, profile.id, 'name', 'Ada');
    t.upstream.script({
      kind: 'message',
      text: ['Hello ', 'Ada'],
      usage: { input_tokens: 20, output_tokens: 3 },
    });

    const completion = await client('anthropic-user').chat.completions.create({
      model: 'claude-fake-large',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi!' },
      ],
      max_tokens: 50,
      stop: ['END'],
      temperature: 0.5,
    });
    expect(completion.choices[0].message.content).toBe('Hello Ada');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 });

    const sent = lastMessagesBody();
    expect(sent.model).toBe('claude-fake-large');
    expect(sent.max_tokens).toBe(50);
    expect(sent.stop_sequences).toEqual(['END']);
    expect(JSON.stringify(sent.system)).toContain('Be brief.');
    expect(JSON.stringify(sent.system)).toContain('Name: Ada');
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi!' }] }]);
    const request = t.upstream.requests.at(-1)!;
    expect(request.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.headers.authorization).toBeUndefined();
  });

  it('streams translated chunks to the official client, and records the reply', async () => {
    t.upstream.script({ kind: 'message', text: ['One ', 'two ', 'three'], delayMs: 20 });
    const stream = await client('anthropic-streamer').chat.completions.create({
      model: 'claude-fake-large',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usageSeen = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usageSeen ||= chunk.usage !== undefined && chunk.usage !== null;
    }
    expect(text).toBe('One two three');
    expect(finish).toBe('stop');
    expect(usageSeen).toBe(true);

    await t.drain();
    const exported = await t.admin().get('/api/profiles/anthropic-streamer/export').expect(200);
    expect(exported.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'count',
      'One two three',
    ]);
  });

  it('maps tool use both ways', async () => {
    t.upstream.script({
      kind: 'message',
      toolUses: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
      stopReason: 'tool_use',
    });
    const completion = await client('anthropic-tools').chat.completions.create({
      model: 'claude-fake-large',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls?.[0]).toMatchObject({
      id: 'toolu_1',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(lastMessagesBody().tools[0]).toMatchObject({
      name: 'get_weather',
      input_schema: { type: 'object' },
    });
  });

  it('turns an Anthropic error into an OpenAI error with the same status', async () => {
    t.upstream.script({ kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' });
    const error = await client('anthropic-error')
      .chat.completions.create({ model: 'claude-fake-large', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(529);
    expect((error as APIError).message).toContain('Overloaded');
  });

  it('answers 400 for what the Messages API cannot express (n > 1)', async () => {
    const res = await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', 'anthropic-n')
      .send({ model: 'claude-fake-large', n: 2, messages: [{ role: 'user', content: 'x' }] })
      .expect(400);
    expectEnvelope(res.body, 'unsupported_for_provider');
  });

  it('ends a broken stream with an SSE error event', async () => {
    t.upstream.script({ kind: 'message', text: ['partial'], then: 'disconnect' });
    const res = await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', 'anthropic-broken')
      .send({ model: 'claude-fake-large', stream: true, messages: [{ role: 'user', content: 'x' }] })
      .expect(200);
    expect(res.text).toContain('partial');
    expect(res.text).toContain('"code":"upstream_unavailable"');
  });

  it('lists Anthropic models in the OpenAI shape', async () => {
    const ids: string[] = [];
    for await (const model of client('anthropic-models').models.list()) {
      ids.push(model.id);
      expect(model.object).toBe('model');
      expect(model.owned_by).toBe('anthropic');
      expect(model.created).toEqual(expect.any(Number));
    }
    expect(ids).toEqual(['claude-fake-large', 'claude-fake-small']);
  });

  describe('only complete answers are learnt', () => {
    const storedMessages = async (userId: string) =>
      (await t.api().get(`/api/profiles/${userId}/export`).expect(200)).body.messages as unknown[];

    it('does not record a stream that ends with an error event', async () => {
      t.upstream.script({ kind: 'message', text: ['I am half ', 'an ans'], then: 'error' });
      const res = await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'anthropic-error-event')
        .send({ model: 'claude-fake-large', stream: true, messages: [{ role: 'user', content: 'Tell me' }] })
        .expect(200);
      expect(res.text).toContain('I am half ');
      expect(res.text).toContain('overloaded_error');
      expect(res.text).not.toContain('[DONE]');
      await t.drain();
      expect(await storedMessages('anthropic-error-event')).toEqual([]);
    });

    it('records a stream that ends with message_stop', async () => {
      t.upstream.script({ kind: 'message', text: ['All ', 'of it'] });
      await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'anthropic-whole')
        .send({ model: 'claude-fake-large', stream: true, messages: [{ role: 'user', content: 'Tell me' }] })
        .expect(200);
      await t.drain();
      expect(await storedMessages('anthropic-whole')).toEqual([
        expect.objectContaining({ role: 'user', content: 'Tell me' }),
        expect.objectContaining({ role: 'assistant', content: 'All of it' }),
      ]);
    });
  });

  describe('input the translation cannot use, and answers that are not what they claim', () => {
    it.each([
      ['tool_calls as a number', { role: 'assistant', content: null, tool_calls: 5 }],
      ['a tool call without a function', { role: 'assistant', content: null, tool_calls: [{ id: 'c1' }] }],
      [
        'tool call arguments that are not JSON',
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{nope' } }],
        },
      ],
      ['a tool message without tool_call_id', { role: 'tool', content: 'x' }],
    ])('answers 400 in the envelope for %s', async (_label, message) => {
      const res = await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'anthropic-bad-input')
        .send({ model: 'claude-fake-large', messages: [{ role: 'user', content: 'x' }, message] });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, 'unsupported_for_provider');
      expect(t.upstream.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(0);
    });

    it.each([
      ['a list', [1, 2]],
      ['an object without content', { id: 'msg_1', type: 'message' }],
      ['content blocks that are not objects', { id: 'msg_1', type: 'message', content: ['text'] }],
    ])(
      'answers 502 upstream_invalid_response when a 2xx message is %s, and records nothing',
      async (_label, body) => {
        t.upstream.script({ kind: 'json', body });
        const res = await t
          .api()
          .post('/v1/chat/completions')
          .set('X-Service-Id', 'anthropic-invalid-answer')
          .send({ model: 'claude-fake-large', messages: [{ role: 'user', content: 'x' }] })
          .expect(502);
        expectEnvelope(res.body, 'upstream_invalid_response');
        await t.drain();
        const exported = await t.api().get('/api/profiles/anthropic-invalid-answer/export').expect(200);
        expect(exported.body.messages).toEqual([]);
      },
    );
  });
});
