import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { AnthropicMessage } from './anthropic-types';
import {
  AnthropicStreamTranslator,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  InvalidChatRequestError,
  toAnthropicRequest,
  toOpenAIChatCompletion,
  toOpenAIErrorBody,
  toOpenAIFinishReason,
  toOpenAIModelList,
} from './anthropic-translation';
import type { OpenAIChatRequest } from './openai-types';
import { ChatCompletionStreamAccumulator, SseParser } from './sse';

const user = (content: OpenAIChatRequest['messages'][number]['content']) =>
  ({ role: 'user', content }) as OpenAIChatRequest['messages'][number];

function request(extra: Partial<OpenAIChatRequest>): OpenAIChatRequest {
  return { model: 'claude-x', messages: [user('hello')], ...extra };
}

describe('toAnthropicRequest', () => {
  it('hoists system and developer messages into top-level system', () => {
    const result = toAnthropicRequest(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          user('How far is it?'),
        ],
      }),
    );
    expect(result.system).toBe('Be brief.\n\nUse metric units.');
    expect(result.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'How far is it?' }] }]);
  });

  it('merges consecutive same-role messages and drops empty ones', () => {
    const result = toAnthropicRequest(
      request({
        messages: [
          user('one'),
          user([{ type: 'text', text: 'two' }]),
          { role: 'assistant', content: '' },
          { role: 'assistant', content: 'three' },
          { role: 'assistant', content: [{ type: 'text', text: 'four' }] },
          user('five'),
        ],
      }),
    );
    expect(result.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'three' },
          { type: 'text', text: 'four' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'five' }] },
    ]);
  });

  it('prefers max_completion_tokens, then max_tokens, then the default', () => {
    expect(toAnthropicRequest(request({ max_completion_tokens: 100, max_tokens: 50 })).max_tokens).toBe(100);
    expect(toAnthropicRequest(request({ max_tokens: 50 })).max_tokens).toBe(50);
    expect(toAnthropicRequest(request({})).max_tokens).toBe(DEFAULT_ANTHROPIC_MAX_TOKENS);
    expect(toAnthropicRequest(request({}), { defaultMaxTokens: 777 }).max_tokens).toBe(777);
  });

  it('maps stop, sampling, stream and user fields', () => {
    expect(
      toAnthropicRequest(request({ stop: 'END', temperature: 0.3, top_p: 0.9, stream: true, user: 'u-1' })),
    ).toMatchObject({
      stop_sequences: ['END'],
      temperature: 0.3,
      top_p: 0.9,
      stream: true,
      metadata: { user_id: 'u-1' },
    });
    expect(toAnthropicRequest(request({ stop: ['a', 'b'] })).stop_sequences).toEqual(['a', 'b']);
    expect(toAnthropicRequest(request({ temperature: 1.7 })).temperature).toBe(1);
    const plain = toAnthropicRequest(request({ stop: null, stream: false }));
    expect(plain).not.toHaveProperty('stop_sequences');
    expect(plain).not.toHaveProperty('stream');
    expect(plain).not.toHaveProperty('system');
  });

  it('translates function tools and every tool_choice form', () => {
    const tools: OpenAIChatRequest['tools'] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather by city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      { type: 'function', function: { name: 'now' } },
    ];
    const result = toAnthropicRequest(request({ tools }));
    expect(result.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather by city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(result).not.toHaveProperty('tool_choice');

    const choice = (tool_choice: OpenAIChatRequest['tool_choice'], parallel_tool_calls?: boolean) =>
      toAnthropicRequest(request({ tools, tool_choice, parallel_tool_calls })).tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ type: 'function', function: { name: 'now' } })).toEqual({ type: 'tool', name: 'now' });
    expect(choice(undefined, false)).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice('required', false)).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(toAnthropicRequest(request({ tool_choice: 'required' }))).not.toHaveProperty('tool_choice');
  });

  it('turns assistant tool_calls into tool_use blocks and tool messages into leading tool_result blocks', () => {
    const result = toAnthropicRequest(
      request({
        messages: [
          user('Weather in Paris and Rome?'),
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
              { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '24C' }] },
          user('Thanks, summarise.'),
        ],
      }),
    );
    expect(result.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: '24C' },
          { type: 'text', text: 'Thanks, summarise.' },
        ],
      },
    ]);
  });

  it('puts tool results first even when user text came before them', () => {
    const result = toAnthropicRequest(
      request({
        messages: [
          user('q'),
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          user('note first'),
          { role: 'tool', tool_call_id: 't', content: 'r' },
        ],
      }),
    );
    expect(result.messages[2].content.map((block) => block.type)).toEqual(['tool_result', 'text']);
  });

  it('converts data-URL images to base64 blocks and http URLs to url sources', () => {
    const result = toAnthropicRequest(
      request({
        messages: [
          user([
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
          ]),
        ],
      }),
    );
    expect(result.messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it.each<[string, Partial<OpenAIChatRequest>]>([
    [
      'a non-base64 data URL',
      { messages: [user([{ type: 'image_url', image_url: { url: 'data:image/png,abc' } }])] },
    ],
    [
      'a non-image data URL',
      { messages: [user([{ type: 'image_url', image_url: { url: 'data:text/plain;base64,QQ==' } }])] },
    ],
    [
      'a file: image URL',
      { messages: [user([{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }])] },
    ],
    ['an audio part', { messages: [user([{ type: 'input_audio', input_audio: {} } as never])] }],
    [
      'unparsable tool arguments',
      {
        messages: [
          user('q'),
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }],
          },
        ],
      },
    ],
    [
      'array tool arguments',
      {
        messages: [
          user('q'),
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '[1]' } }],
          },
        ],
      },
    ],
    ['an unknown role', { messages: [{ role: 'function', content: 'x' } as never] }],
    ['only system messages', { messages: [{ role: 'system', content: 'sys' }] }],
    ['n > 1', { n: 2 }],
    ['a non-function tool', { tools: [{ type: 'custom', custom: {} } as never] }],
  ])('rejects %s with InvalidChatRequestError', (_label, extra) => {
    expect(() => toAnthropicRequest(request(extra))).toThrow(InvalidChatRequestError);
  });
});

const anthropicMessage = (extra: Partial<AnthropicMessage> = {}): AnthropicMessage => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-x-2025',
  content: [{ type: 'text', text: 'Hi there.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 4 },
  ...extra,
});

describe('toOpenAIChatCompletion', () => {
  it('maps a text answer with usage', () => {
    expect(toOpenAIChatCompletion(anthropicMessage(), { created: 1234 })).toEqual({
      id: 'msg_1',
      object: 'chat.completion',
      created: 1234,
      model: 'claude-x-2025',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hi there.', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
    });
  });

  it('maps tool_use blocks to tool_calls, skipping unknown blocks', () => {
    const result = toOpenAIChatCompletion(
      anthropicMessage({
        content: [
          { type: 'thinking' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
      }),
    );
    expect(result.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Let me check.',
      refusal: null,
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    });
    expect(result.choices[0].finish_reason).toBe('tool_calls');
  });

  it('gives null content when there is no text, and counts cached input as prompt tokens', () => {
    const result = toOpenAIChatCompletion(
      anthropicMessage({
        content: [],
        usage: {
          input_tokens: 10,
          output_tokens: 2,
          cache_read_input_tokens: 30,
          cache_creation_input_tokens: 5,
        },
      }),
    );
    expect(result.choices[0].message.content).toBeNull();
    expect(result.usage).toEqual({
      prompt_tokens: 45,
      completion_tokens: 2,
      total_tokens: 47,
      prompt_tokens_details: { cached_tokens: 30 },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
    ['something_new', 'stop'],
  ])('maps stop_reason %p to finish_reason %p', (stopReason, finishReason) => {
    expect(toOpenAIFinishReason(stopReason)).toBe(finishReason);
  });
});

describe('toOpenAIModelList and toOpenAIErrorBody', () => {
  it('maps the Anthropic model list', () => {
    expect(
      toOpenAIModelList({
        data: [
          { id: 'claude-a', type: 'model', display_name: 'A', created_at: '2025-02-19T00:00:00Z' },
          { id: 'claude-b', type: 'model', display_name: 'B', created_at: 'not a date' },
        ],
        has_more: false,
        first_id: 'claude-a',
        last_id: 'claude-b',
      }),
    ).toEqual({
      object: 'list',
      data: [
        { id: 'claude-a', object: 'model', created: 1_739_923_200, owned_by: 'anthropic' },
        { id: 'claude-b', object: 'model', created: 0, owned_by: 'anthropic' },
      ],
    });
  });

  it('rewrites Anthropic error bodies and survives garbage', () => {
    expect(
      toOpenAIErrorBody({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 529),
    ).toEqual({ error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null } });
    expect(toOpenAIErrorBody('<html>', 502).error.message).toBe('upstream returned status 502');
  });
});

function anthropicEvent(type: string, payload: Record<string, unknown> = {}): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

const TEXT_STREAM = [
  anthropicEvent('message_start', {
    message: {
      id: 'msg_s1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x-2025',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 25, output_tokens: 1 },
    },
  }),
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropicEvent('ping'),
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
  'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_de\n\n',
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ', wörld 🙂' } }),
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 7 },
  }),
  anthropicEvent('message_stop'),
].join('');

const TOOL_STREAM = [
  anthropicEvent('message_start', {
    message: { id: 'msg_s2', model: 'claude-x-2025', usage: { input_tokens: 40, output_tokens: 1 } },
  }),
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Checking.' } }),
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('content_block_start', {
    index: 1,
    content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} },
  }),
  anthropicEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
  anthropicEvent('content_block_delta', {
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' },
  }),
  anthropicEvent('content_block_delta', {
    index: 1,
    delta: { type: 'input_json_delta', partial_json: 'ris"}' },
  }),
  anthropicEvent('content_block_stop', { index: 1 }),
  anthropicEvent('content_block_start', {
    index: 2,
    content_block: { type: 'tool_use', id: 'toolu_b', name: 'now', input: {} },
  }),
  anthropicEvent('content_block_delta', {
    index: 2,
    delta: { type: 'input_json_delta', partial_json: '{}' },
  }),
  anthropicEvent('content_block_stop', { index: 2 }),
  anthropicEvent('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }),
  anthropicEvent('message_stop'),
].join('');

/** Feeds `input` in `chunkSize`-byte pieces and returns the OpenAI SSE text produced. */
function translate(
  input: string,
  chunkSize: number,
  includeUsage = false,
): { output: string; translator: AnthropicStreamTranslator } {
  const translator = new AnthropicStreamTranslator({ model: 'requested-model', includeUsage, created: 99 });
  const bytes = Buffer.from(input, 'utf8');
  let output = '';
  for (let i = 0; i < bytes.length; i += chunkSize)
    output += translator.push(bytes.subarray(i, i + chunkSize));
  output += translator.end();
  return { output, translator };
}

function dataPayloads(output: string): string[] {
  return new SseParser().push(output).map((event) => event.data);
}

function chunks(output: string): ChatCompletionChunk[] {
  return dataPayloads(output)
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as ChatCompletionChunk);
}

describe('AnthropicStreamTranslator', () => {
  it.each([1, 5, 64, 100_000])('translates a text stream fed in %p-byte pieces', (chunkSize) => {
    const { output, translator } = translate(TEXT_STREAM, chunkSize);
    const parsed = chunks(output);

    expect(dataPayloads(output).at(-1)).toBe('[DONE]');
    expect(parsed[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(parsed.every((chunk) => chunk.id === 'msg_s1' && chunk.object === 'chat.completion.chunk')).toBe(
      true,
    );
    expect(parsed.every((chunk) => chunk.model === 'claude-x-2025' && chunk.created === 99)).toBe(true);
    expect(parsed.at(-1)?.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect(parsed.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
    expect(parsed.some((chunk) => 'usage' in chunk)).toBe(false);
    expect(translator.text).toBe('Hello, wörld 🙂');
    expect(translator.malformedEvents).toBe(1);
    expect(translator.finished).toBe(true);
    expect(translator.completed).toBe(true);

    const accumulator = new ChatCompletionStreamAccumulator();
    accumulator.push(output);
    expect(accumulator.summary()).toMatchObject({ sawDone: true, malformedEvents: 0 });
    expect(accumulator.text()).toBe('Hello, wörld 🙂');
  });

  it('emits each content delta as soon as its event is complete', () => {
    const translator = new AnthropicStreamTranslator({ model: 'm' });
    const [start, blockStart, ping, firstDelta] = TEXT_STREAM.split(/(?<=\n\n)/);
    expect(translator.push(start)).toContain('"role":"assistant"');
    expect(translator.push(blockStart + ping)).toBe('');
    const firstOutput = translator.push(firstDelta);
    expect(chunks(firstOutput).map((chunk) => chunk.choices[0].delta.content)).toEqual(['Hello']);
  });

  it('adds a usage chunk with empty choices before [DONE] when include_usage was requested', () => {
    const { output } = translate(TEXT_STREAM, 17, true);
    const payloads = dataPayloads(output);
    expect(payloads.at(-1)).toBe('[DONE]');
    const usageChunk = JSON.parse(payloads.at(-2) ?? '') as ChatCompletionChunk;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual({ prompt_tokens: 25, completion_tokens: 7, total_tokens: 32 });
    expect(
      chunks(output)
        .slice(0, -1)
        .every((chunk) => chunk.usage === null),
    ).toBe(true);
  });

  it('translates tool_use blocks into indexed tool_calls deltas', () => {
    const { output } = translate(TOOL_STREAM, 13);
    const parsed = chunks(output);
    const toolDeltas = parsed.flatMap((chunk) => chunk.choices[0].delta.tool_calls ?? []);

    expect(toolDeltas[0]).toEqual({
      index: 0,
      id: 'toolu_a',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    expect(toolDeltas.find((delta) => delta.id === 'toolu_b')).toMatchObject({
      index: 1,
      function: { name: 'now' },
    });
    const argumentsByIndex = (index: number) =>
      toolDeltas
        .filter((delta) => delta.index === index)
        .map((delta) => delta.function?.arguments ?? '')
        .join('');
    expect(JSON.parse(argumentsByIndex(0))).toEqual({ city: 'Paris' });
    expect(JSON.parse(argumentsByIndex(1))).toEqual({});
    expect(parsed.at(-1)?.choices[0].finish_reason).toBe('tool_calls');
    expect(parsed.map((chunk) => chunk.choices[0].delta.content).filter(Boolean)).toEqual(['Checking.']);
  });

  it('turns an error event into an OpenAI error payload and stops without [DONE]', () => {
    const input =
      TEXT_STREAM.split(/(?<=\n\n)/)
        .slice(0, 4)
        .join('') +
      anthropicEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }) +
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ignored' } });
    const { output, translator } = translate(input, 9);
    const payloads = dataPayloads(output);

    expect(JSON.parse(payloads.at(-1) ?? '')).toEqual({
      error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null },
    });
    expect(payloads).not.toContain('[DONE]');
    expect(translator.text).toBe('Hello');
    expect(translator.finished).toBe(true);
    expect(translator.completed).toBe(false);
  });

  it('produces no [DONE] for a stream cut before message_stop', () => {
    const cut = TEXT_STREAM.slice(0, TEXT_STREAM.indexOf('event: message_delta'));
    const { output, translator } = translate(cut, 11);
    expect(dataPayloads(output)).not.toContain('[DONE]');
    expect(translator.finished).toBe(false);
    expect(translator.completed).toBe(false);
    expect(translator.text).toBe('Hello, wörld 🙂');
  });

  it('survives garbage without throwing', () => {
    const translator = new AnthropicStreamTranslator({ model: 'm' });
    expect(() =>
      translator.push(
        'data: [1,2]\n\ndata: {}\n\ndata: {"type":"content_block_delta"}\n\n\u0000\u0001 garbage\n\n',
      ),
    ).not.toThrow();
    expect(translator.malformedEvents).toBe(3);
  });
});
