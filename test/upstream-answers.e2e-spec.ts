import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expectEnvelope, makeProfile, putTrait } from './support/factories';
import { anthropicClient, openaiClient, storedTurns } from './support/clients';
import { useTestApp } from './support/test-app';

// Upstream answers that are not answers are neither relayed as answers nor stored; answers the upstream
// ended at its token limit are answers on every protocol; translations echo what the client sent.

const SERVICE_KEY = 'svc-key-for-upstream-answers';
const CONTEXT_OPENING = '[User profile from the memory service.';
const NOT_JSON = '{"id":"x","choices":[{"message":{"content":"trunc';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const sse = (data: string) => `data: ${data}\n\n`;
const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
  sse(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'fake-model',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    }),
  );
const callStart = (index: number, id: string, name: string) =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
const callArguments = (index: number, fragment: string) =>
  chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });

describe('Upstream answers against an OpenAI-compatible upstream', () => {
  const t = useTestApp({ upstream: 'openai', serviceKey: SERVICE_KEY });
  let seq = 0;
  const nextUser = () => `answers-openai-user-${++seq}`;
  const openai = (userId: string) => openaiClient(t, userId);
  const anthropic = (userId: string) => anthropicClient(t, userId);

  it('answers a chat 200 that is not a chat completion with 502 upstream_invalid_response, and stores nothing', async () => {
    for (const body of [NOT_JSON, '{"ok":true}', '[]', '']) {
      const userId = nextUser();
      t.upstream.script({ kind: 'raw', body });
      const error = await rejection(
        openai(userId).chat.completions.create({
          model: 'fake-model',
          messages: [{ role: 'user', content: 'I live in Lisbon and I love sardines.' }],
        }),
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect({ body, status: (error as InstanceType<typeof OpenAI.APIError>).status }).toEqual({
        body,
        status: 502,
      });
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_invalid_response');
      expect(await storedTurns(t, userId)).toEqual([]);
    }
  });

  it('answers a Responses 200 that is not a response with 502 upstream_invalid_response, and stores nothing', async () => {
    const userId = nextUser();
    t.upstream.scriptResponses({ kind: 'raw', body: NOT_JSON });
    const res = await t
      .api()
      .post('/v1/responses')
      .set('Authorization', `Bearer ${SERVICE_KEY}`)
      .set('X-Service-Id', userId)
      .send({ model: 'fake-model', input: 'I live in Lisbon.' })
      .expect(502);
    expectEnvelope(res.body, 'upstream_invalid_response');
    expect(await storedTurns(t, userId)).toEqual([]);
  });

  it('does not record a chat stream that carried no valid chunk, even when it ends with [DONE]', async () => {
    const userId = nextUser();
    t.upstream.script({ kind: 'raw-sse', lines: [sse(NOT_JSON), sse('not json at all'), sse('[DONE]')] });
    const res = await t
      .api()
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${SERVICE_KEY}`)
      .set('X-Service-Id', userId)
      .send({
        model: 'fake-model',
        stream: true,
        messages: [{ role: 'user', content: 'I live in Lisbon and I love sardines.' }],
      })
      .expect(200);
    expect(res.text).toContain('[DONE]');
    expect(await storedTurns(t, userId)).toEqual([]);
  });

  it('ends a Messages stream that carried no valid chunk with an error, never a made-up end_turn', async () => {
    const userId = nextUser();
    t.upstream.script({ kind: 'raw-sse', lines: [sse(NOT_JSON), sse('[DONE]')] });
    const stream = anthropic(userId).messages.stream({
      model: 'fake-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'I live in Lisbon and I love sardines.' }],
    });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const error = await rejection(stream.finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(types).not.toContain('message_delta');
    expect(types).not.toContain('message_stop');
    expect(await storedTurns(t, userId)).toEqual([]);
  });

  it('records an answer the token limit cut on every protocol, as the upstream ended it', async () => {
    const question = 'I live in Lisbon.';
    const chatUser = nextUser();
    t.upstream.script({ kind: 'stream', chunks: ['Lisbon is ', 'a'], finishReason: 'length' });
    const chat = await openai(chatUser).chat.completions.create({
      model: 'fake-model',
      stream: true,
      messages: [{ role: 'user', content: question }],
    });
    let finish: string | null = null;
    for await (const part of chat) finish = part.choices[0]?.finish_reason ?? finish;
    expect(finish).toBe('length');
    expect(await storedTurns(t, chatUser)).toEqual([
      ['user', question],
      ['assistant', 'Lisbon is a'],
    ]);

    const messagesUser = nextUser();
    t.upstream.script({ kind: 'stream', chunks: ['Lisbon is ', 'a'], finishReason: 'length' });
    const message = await anthropic(messagesUser)
      .messages.stream({
        model: 'fake-model',
        max_tokens: 2,
        messages: [{ role: 'user', content: question }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect(await storedTurns(t, messagesUser)).toEqual([
      ['user', question],
      ['assistant', 'Lisbon is a'],
    ]);

    for (const stream of [false, true]) {
      const responsesUser = nextUser();
      t.upstream.scriptResponses({ kind: 'response', text: ['Lisbon is ', 'a'], status: 'incomplete' });
      const res = await t
        .api()
        .post('/v1/responses')
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .set('X-Service-Id', responsesUser)
        .send({ model: 'fake-model', input: question, stream })
        .expect(200);
      expect(stream ? res.text : res.body.status).toContain(stream ? 'response.incomplete' : 'incomplete');
      expect({ stream, turn: await storedTurns(t, responsesUser) }).toEqual({
        stream,
        turn: [
          ['user', question],
          ['assistant', 'Lisbon is a'],
        ],
      });
    }
  });

  it('closes each interleaved parallel tool call of a Messages stream only once its arguments are whole', async () => {
    const userId = nextUser();
    t.upstream.script({
      kind: 'raw-sse',
      lines: [
        chunk({ role: 'assistant', content: '' }),
        callStart(0, 'call_a', 'weather'),
        callArguments(0, '{"city":'),
        callStart(1, 'call_b', 'time'),
        callArguments(1, '{"zone":'),
        callArguments(0, '"Paris"}'),
        callArguments(1, '"CET"}'),
        callStart(2, 'call_c', 'news'),
        callArguments(2, '{}'),
        chunk({}, 'tool_calls'),
        sse('[DONE]'),
      ],
    });
    const stream = anthropic(userId).messages.stream({
      model: 'fake-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Weather, time and news in Paris?' }],
    });
    const closed: unknown[] = [];
    const events: Array<{ type: string; index?: number }> = [];
    stream.on('contentBlock', (block) => closed.push(block));
    stream.on('streamEvent', (event) => events.push(event as { type: string; index?: number }));
    const message = await stream.finalMessage();
    const calls = [
      { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'time', input: { zone: 'CET' } },
      { type: 'tool_use', id: 'call_c', name: 'news', input: {} },
    ];
    expect(message.content).toEqual(calls);
    expect(message.stop_reason).toBe('tool_use');
    // the SDK reports the block that the stop closed: each one whole
    expect(closed).toEqual(calls);
    const stopped = new Set<number>();
    for (const event of events) {
      if (event.type === 'content_block_stop') stopped.add(event.index!);
      if (event.type === 'content_block_delta') expect(stopped.has(event.index!)).toBe(false);
    }
  });
});

describe('Upstream answers against an Anthropic upstream', () => {
  const t = useTestApp({ upstream: 'anthropic', serviceKey: SERVICE_KEY });
  let seq = 0;
  const nextUser = () => `answers-anthropic-user-${++seq}`;
  const openai = (userId: string) => openaiClient(t, userId);

  it('answers a Messages 200 that is not a message with 502 in Anthropic’s shape, and stores nothing', async () => {
    const userId = nextUser();
    t.upstream.script({ kind: 'raw', body: NOT_JSON });
    const client = anthropicClient(t, userId);
    const error = await rejection(
      client.messages.create({
        model: 'claude-fake-large',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'I live in Lisbon.' }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect(await storedTurns(t, userId)).toEqual([]);
  });

  it('echoes the client’s own instructions in a translated response, never the injected profile', async () => {
    const userId = nextUser();
    const profile = await makeProfile(t, userId);
    await putTrait(t, profile.id, 'name', 'Ada');
    const response = await openai(userId).responses.create({
      model: 'claude-fake-large',
      input: 'Hi',
      instructions: 'Short.',
    });
    expect(t.upstream.requests[0].body.system).toContain(CONTEXT_OPENING);
    expect(response.instructions).toBe('Short.');

    const stream = await openai(userId).responses.create({
      model: 'claude-fake-large',
      input: 'Hi',
      stream: true,
    });
    const echoed: unknown[] = [];
    for await (const event of stream) {
      if ('response' in event) echoed.push(event.response.instructions);
    }
    expect(t.upstream.requests[1].body.system).toContain(CONTEXT_OPENING);
    expect(echoed.length).toBeGreaterThan(0);
    expect(new Set(echoed)).toEqual(new Set([null]));
  });

  it('records a translated response that the token limit cut (response.incomplete), streamed or not', async () => {
    for (const stream of [false, true]) {
      const userId = nextUser();
      t.upstream.script({ kind: 'message', text: ['Lisbon is ', 'a'], stopReason: 'max_tokens' });
      const res = await t
        .api()
        .post('/v1/responses')
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .set('X-Service-Id', userId)
        .send({ model: 'claude-fake-large', input: 'I live in Lisbon.', stream })
        .expect(200);
      expect(stream ? res.text : res.body.status).toContain(stream ? 'response.incomplete' : 'incomplete');
      expect({ stream, turn: await storedTurns(t, userId) }).toEqual({
        stream,
        turn: [
          ['user', 'I live in Lisbon.'],
          ['assistant', 'Lisbon is a'],
        ],
      });
    }
  });
});
