import { APIError } from 'openai';
import { expectEnvelope, makeMemory, makeProfile, putTrait } from './support/factories';
import { openaiClient } from './support/clients';
import { openAIError } from './support/fake-openai-upstream';
import { useTestApp } from './support/test-app';

const SERVICE_KEY = 'svc-key-for-proxy-tests';
const UPSTREAM_KEY = 'sk-upstream-default';

describe('Proxy: /v1/chat/completions and /v1/models against an OpenAI-compatible upstream', () => {
  const t = useTestApp({
    upstream: 'openai',
    upstreamKey: UPSTREAM_KEY,
    serviceKey: SERVICE_KEY,
    env: { UPSTREAM_TIMEOUT_MS: '1500', UPSTREAM_STREAM_IDLE_TIMEOUT_MS: '800' },
  });
  let userSeq = 0;
  const nextUser = () => `proxy-user-${++userSeq}`;
  const client = (userId: string, extraHeaders: Record<string, string> = {}) =>
    openaiClient(t, userId, extraHeaders, { timeout: 10_000 });
  const chat = (body: object, headers: Record<string, string> = {}) =>
    t.admin().post('/v1/chat/completions').set(headers).send(body);
  const upstreamChats = () => t.upstream.requests.filter((r) => r.path === '/v1/chat/completions');
  const lastUpstreamBody = () => upstreamChats().at(-1)!.body;

  describe('non-streaming', () => {
    it('answers through the official client, with the configured upstream key and never our own', async () => {
      const { data, response } = await client(nextUser())
        .chat.completions.create({
          model: 'fake-model',
          messages: [{ role: 'user', content: 'Hello there' }],
        })
        .withResponse();
      expect(data.choices[0].message.content).toBe('echo: Hello there');
      expect(data.object).toBe('chat.completion');
      expect(data.usage?.total_tokens).toEqual(expect.any(Number));
      expect(response.headers.get('x-service-context')).toBe('traits=0; memories=0');
      expect(response.headers.get('x-upstream-request-id')).toMatch(/^req_fake_/);

      const received = upstreamChats()[0];
      expect(received.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(JSON.stringify(received.headers)).not.toContain(SERVICE_KEY);
    });

    it('relays the upstream body verbatim, every choice and field', async () => {
      const upstreamBody = {
        id: 'chatcmpl-verbatim',
        object: 'chat.completion',
        created: 1_700_000_123,
        model: 'fake-model-2025',
        system_fingerprint: 'fp_123',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'one', refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
          {
            index: 1,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: {
          prompt_tokens: 11,
          completion_tokens: 7,
          total_tokens: 18,
          prompt_tokens_details: { cached_tokens: 4 },
        },
      };
      t.upstream.script({ kind: 'json', body: upstreamBody });
      const res = await chat(
        { model: 'fake-model', n: 2, messages: [{ role: 'user', content: 'hi' }] },
        { 'X-Service-Id': nextUser() },
      ).expect(200);
      expect(res.body).toEqual(upstreamBody);
    });

    it('forwards everything but the service object: tools, response_format, n, stop, seed, stream_options...', async () => {
      const passthrough = {
        model: 'fake-model',
        tools: [
          {
            type: 'function',
            function: {
              name: 'lookup',
              description: 'd',
              parameters: { type: 'object', properties: { q: { type: 'string' } } },
            },
          },
        ],
        tool_choice: 'auto',
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
        n: 1,
        stop: ['END'],
        seed: 42,
        temperature: 0.3,
        logprobs: true,
        top_logprobs: 2,
        max_completion_tokens: 99,
        parallel_tool_calls: false,
        user: 'end-user-7',
        vendor_extension: { anything: [1, 2, 3] },
      };
      await chat({
        ...passthrough,
        messages: [{ role: 'user', content: 'q' }],
        service: { skipExtraction: true },
      }).expect(200);
      const received = lastUpstreamBody();
      expect(received.service).toBeUndefined();
      for (const [field, value] of Object.entries(passthrough))
        expect({ field, value: received[field] }).toEqual({ field, value });
    });

    it('injects the profile context into a new first system message, framed as data about the user', async () => {
      const userId = nextUser();
      const profile = await makeProfile(t, userId);
      await putTrait(t, profile.id, 'preferred_language', 'German');
      await putTrait(t, profile.id, 'interests', ['sailing', 'chess']);
      const memory = await makeMemory(t, profile.id, {
        content: 'Owns a sailing boat called Mira',
        importance: 0.9,
      });
      await makeMemory(t, profile.id, { content: 'Allergic to peanuts', importance: 0.2 });

      const res = await chat(
        {
          model: 'fake-model',
          messages: [{ role: 'user', content: 'Where can I take my boat this weekend?' }],
          service: { debug: true },
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      expect(res.headers['x-service-context']).toBe('traits=2; memories=2');
      expect(res.headers['x-service-context-ids']).toContain(memory.id);

      const messages = lastUpstreamBody().messages;
      expect(messages).toHaveLength(2);
      expect(messages[0].role).toBe('system');
      const context: string = messages[0].content;
      expect(context).toContain('Preferred language: German');
      expect(context).toContain('Interests: sailing, chess');
      expect(context).toMatch(/not instructions/i);
      expect(context.indexOf('Owns a sailing boat called Mira')).toBeLessThan(
        context.indexOf('Allergic to peanuts'),
      );
      expect(context.indexOf('Preferred language')).toBeLessThan(context.indexOf('Owns a sailing boat'));
      expect(messages[1]).toEqual({ role: 'user', content: 'Where can I take my boat this weekend?' });

      await t.drain();
      const list = await t
        .api()
        .get(`/api/profiles/${profile.id}/memories`)
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .expect(200);
      expect(
        list.body.memories.every((m: { lastAccessedAt: string | null }) => m.lastAccessedAt !== null),
      ).toBe(true);
    });

    it('appends the context to the first system or developer message instead of adding one', async () => {
      const userId = nextUser();
      const profile = await makeProfile(t, userId);
      await putTrait(t, profile.id, 'name', 'Ada');
      await chat(
        {
          model: 'fake-model',
          messages: [
            { role: 'developer', content: 'You are terse.' },
            { role: 'system', content: 'Second system.' },
            { role: 'user', content: 'hi' },
          ],
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      const messages = lastUpstreamBody().messages;
      expect(messages).toHaveLength(3);
      expect(messages[0].role).toBe('developer');
      expect(messages[0].content).toMatch(/^You are terse\.\n\n\[User profile/);
      expect(messages[0].content).toContain('Name: Ada');
      expect(messages[1]).toEqual({ role: 'system', content: 'Second system.' });
    });

    it('adds a text part when the system message is an array of parts', async () => {
      const userId = nextUser();
      const profile = await makeProfile(t, userId);
      await putTrait(t, profile.id, 'name', 'Bo');
      await chat(
        {
          model: 'fake-model',
          messages: [
            { role: 'system', content: [{ type: 'text', text: 'Be kind.' }] },
            { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          ],
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      const system = lastUpstreamBody().messages[0];
      expect(system.content).toHaveLength(2);
      expect(system.content[0]).toEqual({ type: 'text', text: 'Be kind.' });
      expect(system.content[1].text).toContain('Name: Bo');
    });

    it('sends the messages untouched with service.skipInjection', async () => {
      const userId = nextUser();
      const profile = await makeProfile(t, userId);
      await putTrait(t, profile.id, 'name', 'Cy');
      const messages = [{ role: 'user', content: 'hi' }];
      const res = await chat(
        { model: 'fake-model', messages, service: { skipInjection: true } },
        { 'X-Service-Id': userId },
      ).expect(200);
      expect(lastUpstreamBody().messages).toEqual(messages);
      expect(res.headers['x-service-context']).toBe('traits=0; memories=0');
    });
  });

  describe('per-request trait schemas', () => {
    it('lets service.traits turn off injection of a trait and add a new one with its own template', async () => {
      const userId = nextUser();
      const profile = await makeProfile(t, userId);
      await putTrait(t, profile.id, 'name', 'Dee');
      await putTrait(t, profile.id, 'diet', 'vegan');
      await chat(
        {
          model: 'fake-model',
          messages: [{ role: 'user', content: 'dinner ideas?' }],
          service: {
            traits: [
              { key: 'name', injection: { enabled: false } },
              {
                key: 'diet',
                valueType: 'string',
                extraction: { enabled: true },
                injection: { enabled: true, template: 'Eats: {{value}}' },
              },
            ],
          },
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      const context: string = lastUpstreamBody().messages[0].content;
      expect(context).not.toContain('Dee');
      expect(context).toContain('Eats: vegan');
    });

    it('takes X-Service-Traits, with the body winning per key', async () => {
      const userId = nextUser();
      const profile = await makeProfile(t, userId);
      await putTrait(t, profile.id, 'name', 'Eve');
      const header = JSON.stringify([
        { key: 'name', injection: { enabled: true, template: 'HEADER {{value}}' } },
      ]);
      await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': userId, 'X-Service-Traits': header },
      ).expect(200);
      expect(lastUpstreamBody().messages[0].content).toContain('HEADER Eve');
      await chat(
        {
          model: 'fake-model',
          messages: [{ role: 'user', content: 'x' }],
          service: { traits: [{ key: 'name', injection: { template: 'BODY {{value}}' } }] },
        },
        { 'X-Service-Id': userId, 'X-Service-Traits': header },
      ).expect(200);
      expect(lastUpstreamBody().messages[0].content).toContain('BODY Eve');
    });

    it.each([
      ['not JSON', '{nope'],
      ['not an array', '{"key":"x"}'],
      ['a bad key', '[{"key":"a b"}]'],
      ['a bad valueType', '[{"key":"a","valueType":"date"}]'],
      ['a non-boolean flag', '[{"key":"a","injection":{"enabled":"yes"}}]'],
    ])('answers 400 invalid_service_traits for a header that is %s', async (_label, header) => {
      const res = await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': nextUser(), 'X-Service-Traits': header },
      ).expect(400);
      expectEnvelope(res.body, 'invalid_service_traits');
      expect(upstreamChats()).toHaveLength(0);
    });
  });

  describe('user identification', () => {
    it('takes X-Service-Id, then metadata.profile_id, then user', async () => {
      const send = (headers: Record<string, string>, extra: object) =>
        chat(
          {
            model: 'fake-model',
            messages: [{ role: 'user', content: 'x' }],
            service: { skipExtraction: true },
            ...extra,
          },
          headers,
        ).expect(200);
      await send({ 'X-Service-Id': ' header-id ' }, { user: 'user-id', metadata: { profile_id: 'meta-id' } });
      await send({}, { user: 'user-id', metadata: { profile_id: 'meta-id' } });
      await send({}, { user: 'user-id' });
      await t.drain();
      for (const id of ['header-id', 'meta-id', 'user-id']) {
        await t.api().get(`/api/profiles/${id}`).set('Authorization', `Bearer ${SERVICE_KEY}`).expect(200);
      }
      expect(upstreamChats()[2].body.user).toBe('user-id');
    });

    it('answers 400 missing_user_id, through the official client as an APIError', async () => {
      const anonymous = openaiClient(t, null);
      const error = await anonymous.chat.completions
        .create({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(400);
      expect((error as APIError).code).toBe('missing_user_id');
      expect(upstreamChats()).toHaveLength(0);
    });

    it('answers 400 invalid_user_id for an id over 255 characters', async () => {
      const res = await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': 'u'.repeat(256) },
      ).expect(400);
      expectEnvelope(res.body, 'invalid_user_id');
    });

    it('creates one profile for concurrent first requests of a new user', async () => {
      const userId = nextUser();
      await Promise.all(
        Array.from({ length: 8 }, () =>
          chat(
            { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
            { 'X-Service-Id': userId },
          ).expect(200),
        ),
      );
      const [{ n }] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM profiles WHERE external_id = $1`,
        [userId],
      );
      expect(n).toBe(1);
    });
  });

  describe('streaming', () => {
    it('streams through the official client, chunk by chunk, ending with the upstream [DONE]', async () => {
      t.upstream.script({ kind: 'stream', chunks: ['Hel', 'lo ', 'wor', 'ld'], delayMs: 150 });
      const started = Date.now();
      const stream = await client(nextUser()).chat.completions.create({
        model: 'fake-model',
        messages: [{ role: 'user', content: 'say hello' }],
        stream: true,
      });
      const arrivals: number[] = [];
      let text = '';
      for await (const chunk of stream) {
        arrivals.push(Date.now() - started);
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      expect(text).toBe('Hello world');
      // The first piece arrives long before the last: nothing is buffered.
      expect(arrivals[0]).toBeLessThan(arrivals.at(-1)! - 300);
    });

    it('relays the raw SSE bytes with the upstream [DONE]', async () => {
      t.upstream.script({ kind: 'stream', chunks: ['a', 'b'] });
      const res = await chat(
        { model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': nextUser() },
      ).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(res.text.trim().endsWith('data: [DONE]')).toBe(true);
      expect(res.text.match(/^data: /gm)!.length).toBeGreaterThanOrEqual(4);
    });

    it('records the streamed reply once the stream completed', async () => {
      const userId = nextUser();
      t.upstream.script({ kind: 'stream', chunks: ['I ', 'see.'] });
      await chat(
        {
          model: 'fake-model',
          stream: true,
          messages: [{ role: 'user', content: 'I moved to Lisbon last year.' }],
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      await t.drain();
      const res = await t
        .api()
        .get(`/api/profiles/${userId}/export`)
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .expect(200);
      expect(res.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', 'I moved to Lisbon last year.'],
        ['assistant', 'I see.'],
      ]);
    });

    it('ends a stream the upstream breaks off with an SSE error event, and records nothing', async () => {
      const userId = nextUser();
      t.upstream.script({ kind: 'stream', chunks: ['par', 'tial'], then: 'disconnect' });
      const res = await chat(
        { model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': userId },
      ).expect(200);
      expect(res.text).toContain('par');
      const last = res.text.trim().split('\n\n').at(-1)!;
      expect(JSON.parse(last.replace(/^data: /, ''))).toEqual({
        error: expect.objectContaining({ code: 'upstream_unavailable', type: 'upstream_error' }),
      });
      await t.drain();
      const [{ n }] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM messages m JOIN profiles p ON p.id = m.profile_id WHERE p.external_id = $1`,
        [userId],
      );
      expect(n).toBe(0);
    });

    it('ends a stream that goes silent after the idle timeout with an upstream_timeout event', async () => {
      t.upstream.script({ kind: 'stream', chunks: ['x'], then: 'hang' });
      const res = await chat(
        { model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': nextUser() },
      ).expect(200);
      expect(res.text).toContain('"code":"upstream_timeout"');
    });

    it('passes malformed chunks through untouched and still completes', async () => {
      t.upstream.script({ kind: 'stream', chunks: ['ok'], then: 'malformed' });
      const res = await chat(
        { model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': nextUser() },
      ).expect(200);
      expect(res.text).toContain('data: [DONE]');
    });

    it('aborts the upstream request when the client disconnects', async () => {
      t.upstream.script({ kind: 'stream', chunks: ['slow'], then: 'hang' });
      const controller = new AbortController();
      const response = await fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${SERVICE_KEY}`,
          'x-service-id': nextUser(),
        },
        body: JSON.stringify({
          model: 'fake-model',
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await t.upstream.waitForClientClose(upstreamChats().length - 1, 5_000);
    });
  });

  describe('a client that leaves while the upstream has not answered', () => {
    it('aborts the upstream request', async () => {
      t.upstream.script({ kind: 'hang' });
      const before = t.upstream.requests.length;
      const controller = new AbortController();
      const sent = fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${SERVICE_KEY}`,
          'x-service-id': nextUser(),
        },
        body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] }),
        signal: controller.signal,
      }).catch(() => undefined);
      await t.upstream.waitForRequests(before + 1);
      controller.abort();
      await sent;
      await t.upstream.waitForClientClose(before, 5_000);
    });
  });

  describe('upstream failures before the first byte', () => {
    it.each([400, 401, 404, 429, 500, 503])(
      'passes the upstream status %i and error body through, as an APIError in the client',
      async (status) => {
        const body = openAIError(`upstream says ${status}`, 'upstream_type', `code_${status}`);
        t.upstream.script({ kind: 'error', status, body, headers: { 'retry-after': '7' } });
        const error = await client(nextUser())
          .chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(APIError);
        expect((error as APIError).status).toBe(status);
        expect((error as APIError).error).toEqual((body as { error: unknown }).error);
        expect((error as APIError).headers?.get('retry-after')).toBe('7');
      },
    );

    it('answers 502 upstream_unavailable when the upstream drops the connection', async () => {
      t.upstream.script({ kind: 'disconnect' });
      const res = await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': nextUser() },
      ).expect(502);
      expect(expectEnvelope(res.body, 'upstream_unavailable').type).toBe('upstream_error');
    });

    it('answers 504 upstream_timeout when headers do not come in UPSTREAM_TIMEOUT_MS', async () => {
      t.upstream.script({ kind: 'hang' });
      const started = Date.now();
      const res = await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': nextUser() },
      ).expect(504);
      expectEnvelope(res.body, 'upstream_timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    });

    it('records nothing for a failed exchange', async () => {
      const userId = nextUser();
      t.upstream.script({ kind: 'error', status: 500, body: openAIError('boom', 'server_error') });
      await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'x' }] },
        { 'X-Service-Id': userId },
      ).expect(500);
      await t.drain();
      const res = await t
        .api()
        .get(`/api/profiles/${userId}/export`)
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .expect(200);
      expect(res.body.messages).toEqual([]);
    });
  });

  describe('upstream keys', () => {
    it('uses X-Upstream-Key instead of the configured key, for the configured upstream only', async () => {
      const error = await client(nextUser(), { 'X-Upstream-Key': 'sk-someone-else' })
        .chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect((error as APIError).status).toBe(401);
      expect(upstreamChats()[0].headers.authorization).toBe('Bearer sk-someone-else');
    });
  });

  describe('recording', () => {
    it('stores only this turn: the user messages after the last assistant message, and the reply', async () => {
      const userId = nextUser();
      await chat(
        { model: 'fake-model', messages: [{ role: 'user', content: 'first question' }] },
        { 'X-Service-Id': userId },
      ).expect(200);
      await chat(
        {
          model: 'fake-model',
          messages: [
            { role: 'system', content: 'sys' },
            { role: 'user', content: 'first question' },
            { role: 'assistant', content: 'echo: first question' },
            { role: 'user', content: 'second question' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'and a part' },
                { type: 'image_url', image_url: { url: 'data:,' } },
              ],
            },
          ],
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      await t.drain();
      const res = await t
        .api()
        .get(`/api/profiles/${userId}/export`)
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .expect(200);
      expect(res.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', 'first question'],
        ['assistant', 'echo: first question'],
        ['user', 'second question'],
        ['user', 'and a part'],
        ['assistant', 'echo: and a part'],
      ]);
    });

    it('stores a skipExtraction turn already marked as extracted', async () => {
      const userId = nextUser();
      await chat(
        {
          model: 'fake-model',
          messages: [{ role: 'user', content: 'private' }],
          service: { skipExtraction: true },
        },
        { 'X-Service-Id': userId },
      ).expect(200);
      await t.drain();
      const rows = await t.dataSource.query(
        `SELECT m.extracted_at FROM messages m JOIN profiles p ON p.id = m.profile_id WHERE p.external_id = $1`,
        [userId],
      );
      expect(rows).toHaveLength(2);
      expect(rows.every((row: { extracted_at: Date | null }) => row.extracted_at !== null)).toBe(true);
    });
  });

  describe('bad input', () => {
    it.each([
      ['no model', { messages: [{ role: 'user', content: 'x' }] }, 'invalid_model'],
      ['a numeric model', { model: 5, messages: [{ role: 'user', content: 'x' }] }, 'invalid_model'],
      ['an empty model', { model: ' ', messages: [{ role: 'user', content: 'x' }] }, 'invalid_model'],
      ['no messages', { model: 'm' }, 'invalid_messages'],
      ['empty messages', { model: 'm', messages: [] }, 'invalid_messages'],
      ['messages as an object', { model: 'm', messages: { role: 'user' } }, 'invalid_messages'],
      ['a message that is a string', { model: 'm', messages: ['hi'] }, 'invalid_messages'],
      ['an unknown role', { model: 'm', messages: [{ role: 'wizard', content: 'x' }] }, 'invalid_messages'],
      ['a numeric content', { model: 'm', messages: [{ role: 'user', content: 5 }] }, 'invalid_messages'],
      [
        'a null user content',
        { model: 'm', messages: [{ role: 'user', content: null }] },
        'invalid_messages',
      ],
      [
        'parts that are not objects',
        { model: 'm', messages: [{ role: 'user', content: ['x'] }] },
        'invalid_messages',
      ],
      [
        'stream as a string',
        { model: 'm', stream: 'yes', messages: [{ role: 'user', content: 'x' }] },
        'invalid_stream',
      ],
      [
        'user as a number',
        { model: 'm', user: 5, messages: [{ role: 'user', content: 'x' }] },
        'invalid_user_id',
      ],
      [
        'metadata as an array',
        { model: 'm', metadata: [], messages: [{ role: 'user', content: 'x' }] },
        'invalid_metadata',
      ],
      [
        'metadata.profile_id as a number',
        { model: 'm', metadata: { profile_id: 1 }, messages: [{ role: 'user', content: 'x' }] },
        'invalid_user_id',
      ],
      [
        'service as a string',
        { model: 'm', service: 'x', messages: [{ role: 'user', content: 'x' }] },
        'invalid_service',
      ],
      [
        'a non-boolean skipInjection',
        { model: 'm', service: { skipInjection: 1 }, messages: [{ role: 'user', content: 'x' }] },
        'invalid_service',
      ],
      [
        'service.traits as an object',
        { model: 'm', service: { traits: {} }, messages: [{ role: 'user', content: 'x' }] },
        'invalid_service_traits',
      ],
      [
        'a trait schema without key',
        { model: 'm', service: { traits: [{}] }, messages: [{ role: 'user', content: 'x' }] },
        'invalid_service_traits',
      ],
      [
        'an unknown service option',
        { model: 'm', service: { inject: true }, messages: [{ role: 'user', content: 'x' }] },
        'unknown_field',
      ],
    ])('answers 400 for %s, without calling the upstream', async (_label, body, code) => {
      const res = await chat(body, { 'X-Service-Id': nextUser() });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, code);
      expect(upstreamChats()).toHaveLength(0);
    });

    it('refuses __proto__ among the service options, and forwards the upstream fields so named as they are', async () => {
      const raw = (body: string) =>
        t
          .api()
          .post('/v1/chat/completions')
          .set('Authorization', `Bearer ${SERVICE_KEY}`)
          .set('X-Service-Id', nextUser())
          .set('content-type', 'application/json')
          .send(body);
      const messages = '"messages":[{"role":"user","content":"x"}]';
      const refused = await raw(`{"model":"m",${messages},"service":{"__proto__":{"debug":true}}}`);
      expect(refused.status).toBe(400);
      expect(expectEnvelope(refused.body, 'unknown_field').param).toBe('service.__proto__');
      expect(upstreamChats()).toHaveLength(0);
      await raw(`{"model":"m",${messages},"__proto__":{"a":1},"metadata":{"constructor":"c"}}`).expect(200);
      expect(upstreamChats()[0].rawBody).toContain('"__proto__":{"a":1}');
      expect(upstreamChats()[0].rawBody).toContain('"metadata":{"constructor":"c"}');
    });

    it('answers 401 without the service key, before touching the upstream', async () => {
      const res = await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'x')
        .send({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
        .expect(401);
      expectEnvelope(res.body, 'missing_api_key');
      const models = await t.api().get('/v1/models').expect(401);
      expectEnvelope(models.body, 'missing_api_key');
      expect(t.upstream.requests).toHaveLength(0);
    });
  });

  describe('GET /v1/models', () => {
    it('lists the upstream models through the official client', async () => {
      const models = [];
      for await (const model of client('models-user').models.list()) models.push(model.id);
      expect(models).toEqual(['fake-model', 'fake-model-mini']);
      expect(t.upstream.requests[0].headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    });

    it('uses X-Upstream-Key and relays the upstream error status', async () => {
      const res = await t
        .api()
        .get('/v1/models')
        .set('Authorization', `Bearer ${SERVICE_KEY}`)
        .set('X-Upstream-Key', 'wrong')
        .expect(401);
      expect(res.body.error.code).toBe('invalid_api_key');
    });
  });
});
