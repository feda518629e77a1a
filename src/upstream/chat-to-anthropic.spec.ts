import {
  chatChunk,
  chatEvent,
  DONE,
  feedInPieces,
  textStream,
  toolStream,
  typedEvents,
  usageEvent,
} from '../../test/support/protocol-fixtures';
import {
  chatCompletionToAnthropicMessage,
  formatAnthropicErrorEvent,
  toAnthropicErrorBody,
  toAnthropicStopReason,
} from './chat-to-anthropic-response';
import { anthropicErrorType } from '../common/api-error';
import { ChatToAnthropicStreamTranslator } from './chat-to-anthropic-stream';
import { AnthropicStreamAccumulator } from './anthropic-stream-accumulator';

const completion = (message: Record<string, unknown>, finishReason = 'stop', usage?: unknown) => ({
  id: 'chatcmpl-9',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-x-2026',
  choices: [
    { index: 0, message: { role: 'assistant', refusal: null, ...message }, finish_reason: finishReason },
  ],
  usage: usage ?? { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
});

describe('chatCompletionToAnthropicMessage', () => {
  it('maps a text answer with id, model, stop reason and usage', () => {
    expect(chatCompletionToAnthropicMessage(completion({ content: 'Hello!' }))).toEqual({
      id: 'chatcmpl-9',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x-2026',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('maps tool calls to tool_use blocks with parsed input', () => {
    const message = chatCompletionToAnthropicMessage(
      completion(
        {
          content: 'Checking.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'call_2', type: 'function', function: { name: 'now', arguments: '' } },
            { id: 'call_3', type: 'function', function: { name: 'bad', arguments: '{not json' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'now', input: {} },
      { type: 'tool_use', id: 'call_3', name: 'bad', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('gives an answer of only tool calls no text block, and a refusal the refusal stop reason', () => {
    const onlyTools = chatCompletionToAnthropicMessage(
      completion({
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      }),
    );
    expect(onlyTools.content.map((block) => block.type)).toEqual(['tool_use']);
    const refused = chatCompletionToAnthropicMessage(
      completion({ content: null, refusal: 'I cannot help.' }),
    );
    expect(refused.content).toEqual([{ type: 'text', text: 'I cannot help.' }]);
    expect(refused.stop_reason).toBe('refusal');
  });

  it('reports cached prompt tokens as cache reads, outside input_tokens', () => {
    const message = chatCompletionToAnthropicMessage(
      completion({ content: 'x' }, 'stop', {
        prompt_tokens: 100,
        completion_tokens: 3,
        total_tokens: 103,
        prompt_tokens_details: { cached_tokens: 60 },
      }),
    );
    expect(message.usage).toEqual({
      input_tokens: 40,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 60,
    });
  });

  it('reads garbage as an empty message rather than throwing', () => {
    for (const body of [
      null,
      'text',
      [],
      {},
      { choices: 'x' },
      { choices: [null] },
      { choices: [{ message: 5 }] },
    ]) {
      const message = chatCompletionToAnthropicMessage(body);
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: 'end_turn',
      });
    }
  });
});

describe('toAnthropicStopReason', () => {
  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
    ['something_new', 'end_turn'],
  ])('%p -> %p', (finish, stop) => {
    expect(toAnthropicStopReason(finish)).toBe(stop);
  });
});

describe('Anthropic error shape', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [409, 'invalid_request_error'],
    [413, 'request_too_large'],
    [422, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('status %p is a %p', (status, type) => {
    expect(anthropicErrorType(status)).toBe(type);
  });

  it('keeps the upstream message, whatever shape the body has', () => {
    expect(
      toAnthropicErrorBody(
        {
          error: {
            message: 'Rate limit reached',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
        429,
      ),
    ).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached' } });
    expect(toAnthropicErrorBody({ error: 'model not found' }, 404).error.message).toBe('model not found');
    expect(toAnthropicErrorBody({ message: 'bad gateway' }, 502).error.message).toBe('bad gateway');
    expect(toAnthropicErrorBody('<html>oops</html>', 500).error).toEqual({
      type: 'api_error',
      message: 'upstream returned status 500',
    });
  });

  it('formats an error stream event', () => {
    expect(typedEvents(formatAnthropicErrorEvent('overloaded_error', 'Overloaded'))).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ]);
  });
});

function translate(input: string, size = 7): { output: string; translator: ChatToAnthropicStreamTranslator } {
  const translator = new ChatToAnthropicStreamTranslator({ model: 'asked-model' });
  return { output: feedInPieces(translator, input, size), translator };
}

describe('ChatToAnthropicStreamTranslator', () => {
  it.each([1, 3, 64, 1_000_000])('translates a text stream fed in %p-byte pieces', (size) => {
    const { output, translator } = translate(textStream(['Hel', 'lo, wö', 'rld 🙂']), size);
    const events = typedEvents(output);

    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.every((event) => event.data.type === event.event)).toBe(true);
    expect(events[0].data.message).toEqual({
      id: 'chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    });
    expect(events[1].data).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    expect(events[2].data).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'Hel' },
    });
    expect(events[6].data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 11, output_tokens: 3, cache_read_input_tokens: 0 },
    });
    expect(translator.text).toBe('Hello, wörld 🙂');
    expect(translator.completed).toBe(true);
    expect(translator.failed).toBe(false);

    const accumulator = new AnthropicStreamAccumulator();
    accumulator.push(output);
    expect(accumulator.text).toBe('Hello, wörld 🙂');
    expect(accumulator.completed).toBe(true);
  });

  it('writes each piece as soon as its chunk arrives', () => {
    const translator = new ChatToAnthropicStreamTranslator({ model: 'm' });
    expect(
      typedEvents(translator.push(chatChunk({ role: 'assistant', content: '' }))).map((e) => e.event),
    ).toEqual(['message_start']);
    expect(typedEvents(translator.push(chatChunk({ content: 'Hi' }))).map((e) => e.event)).toEqual([
      'content_block_start',
      'content_block_delta',
    ]);
    expect(typedEvents(translator.push(chatChunk({}, 'stop'))).map((e) => e.event)).toEqual([
      'content_block_stop',
    ]);
    expect(translator.completed).toBe(false);
    expect(typedEvents(translator.push(DONE)).map((e) => e.event)).toEqual(['message_delta', 'message_stop']);
    expect(translator.completed).toBe(true);
  });

  it('translates tool calls into tool_use blocks with input_json_delta fragments', () => {
    const { output } = translate(toolStream(), 11);
    const events = typedEvents(output).map((event) => event.data);

    expect(
      events.filter((e) => e.type === 'content_block_start').map((e) => [e.index, e.content_block]),
    ).toEqual([
      [0, { type: 'text', text: '' }],
      [1, { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} }],
      [2, { type: 'tool_use', id: 'call_b', name: 'now', input: {} }],
    ]);
    const json = (index: number) =>
      events
        .filter((e) => e.type === 'content_block_delta' && e.index === index)
        .map((e) => e.delta.partial_json)
        .join('');
    expect(JSON.parse(json(1))).toEqual({ city: 'Paris' });
    expect(JSON.parse(json(2))).toEqual({});
    expect(events.filter((e) => e.type === 'content_block_stop').map((e) => e.index)).toEqual([0, 1, 2]);
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
  });

  it('maps length to max_tokens and counts cached prompt tokens as cache reads', () => {
    const input = [chatChunk({ content: 'cut' }), chatChunk({}, 'length'), usageEvent(50, 9, 20), DONE].join(
      '',
    );
    const events = typedEvents(translate(input).output).map((event) => event.data);
    expect(events.find((e) => e.type === 'message_delta')).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { input_tokens: 30, output_tokens: 9, cache_read_input_tokens: 20 },
    });
  });

  it('ends the message when the body ends after a finish_reason without [DONE]', () => {
    const { output, translator } = translate([chatChunk({ content: 'ok' }), chatChunk({}, 'stop')].join(''));
    expect(typedEvents(output).at(-1)?.event).toBe('message_stop');
    expect(translator.completed).toBe(true);
  });

  it('invents no ending for a stream cut before finish_reason and [DONE]', () => {
    const { output, translator } = translate(
      [chatChunk({ role: 'assistant' }), chatChunk({ content: 'par' })].join(''),
    );
    const types = typedEvents(output).map((event) => event.event);
    expect(types).not.toContain('message_delta');
    expect(types).not.toContain('message_stop');
    expect(translator.completed).toBe(false);
    expect(translator.text).toBe('par');
  });

  it('turns an in-stream error chunk into an error event and reads nothing after it', () => {
    const input = [
      chatChunk({ content: 'partial' }),
      chatEvent({ error: { message: 'Rate limit reached', type: 'rate_limit_exceeded' } }),
      chatChunk({ content: 'ignored' }),
      DONE,
    ].join('');
    const { output, translator } = translate(input);
    const events = typedEvents(output);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached' } },
    });
    expect(events.map((e) => e.event)).not.toContain('message_stop');
    expect(translator.failed).toBe(true);
    expect(translator.completed).toBe(false);
    expect(translator.text).toBe('partial');

    const accumulator = new AnthropicStreamAccumulator();
    accumulator.push(output);
    expect(accumulator.completed).toBe(false);
  });

  it('writes an error event for an upstream that broke off, once', () => {
    const translator = new ChatToAnthropicStreamTranslator({ model: 'm' });
    translator.push(chatChunk({ content: 'a' }));
    expect(typedEvents(translator.fail('The upstream provider could not be reached.'))).toEqual([
      {
        event: 'error',
        data: {
          type: 'error',
          error: { type: 'api_error', message: 'The upstream provider could not be reached.' },
        },
      },
    ]);
    expect(translator.fail('again')).toBe('');
    expect(translator.push(DONE)).toBe('');
    expect(translator.completed).toBe(false);
  });

  it('uses the asked model when the upstream names none', () => {
    const { output } = translate(
      chatEvent({ model: undefined, choices: [{ index: 0, delta: { content: 'x' } }] }) + DONE,
    );
    const events = typedEvents(output);
    expect(events[0].event).toBe('message_start');
    expect(events[0].data.message.model).toBe('asked-model');
  });

  it('ends a stream that carried no valid chunk with an error event, never a made-up end_turn', () => {
    for (const input of [
      DONE,
      'data: {"id":"x","choices":[{"delta":{"content":"tr\n\ndata: nope\n\n' + DONE,
    ]) {
      const { output, translator } = translate(input);
      const events = typedEvents(output);
      expect(events.map((e) => e.event)).toEqual(['error']);
      expect(events[0].data.error.type).toBe('api_error');
      expect(translator.completed).toBe(false);
    }
  });

  it('opens a new text block for text after a tool call, and treats a refusal as text', () => {
    const input = [
      chatChunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{}' } }] }),
      chatChunk({ content: 'after' }),
      chatChunk({ refusal: ' no' }),
      chatChunk({}, 'stop'),
      DONE,
    ].join('');
    const { output, translator } = translate(input, 1000);
    const starts = typedEvents(output)
      .map((e) => e.data)
      .filter((e) => e.type === 'content_block_start');
    expect(starts.map((e) => [e.index, e.content_block.type])).toEqual([
      [0, 'tool_use'],
      [1, 'text'],
    ]);
    expect(translator.text).toBe('after no');
  });

  it('survives garbage, other choices and odd chunks without throwing', () => {
    const translator = new ChatToAnthropicStreamTranslator({ model: 'm' });
    const input = [
      'data: not json\n\n',
      'data: [1,2]\n\n',
      'data: {"id":"x"}\n\n',
      chatEvent({ choices: [{ index: 1, delta: { content: 'other choice' } }] }),
      chatEvent({ choices: [{ index: 0, delta: { content: 5, tool_calls: 'x' } }] }),
      chatEvent({ choices: [{ index: 0, delta: { tool_calls: [null] } }] }),
      ': comment\n\n',
      '\u0000\u0001 garbage\n\n',
    ].join('');
    expect(() => translator.push(input)).not.toThrow();
    expect(translator.text).toBe('');
    expect(translator.malformedEvents).toBe(4);
    expect(() => translator.end()).not.toThrow();
    expect(translator.completed).toBe(false);
  });

  it('keeps a huge answer whole', () => {
    const piece = 'ü'.repeat(10_000);
    const { translator } = translate(textStream(Array.from({ length: 100 }, () => piece)), 65_536);
    expect(translator.text.length).toBe(1_000_000);
  });
});
