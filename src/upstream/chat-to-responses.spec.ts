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
import { chatCompletionToResponse, formatResponsesErrorEvent } from './chat-to-responses-response';
import { ChatToResponsesStreamTranslator } from './chat-to-responses-stream';
import { ResponsesStreamAccumulator, responseOutputText } from './responses-stream-accumulator';

const completion = (message: Record<string, unknown>, finishReason = 'stop') => ({
  id: 'chatcmpl-9',
  object: 'chat.completion',
  created: 1,
  model: 'claude-x-2026',
  choices: [
    { index: 0, message: { role: 'assistant', refusal: null, ...message }, finish_reason: finishReason },
  ],
  usage: {
    prompt_tokens: 20,
    completion_tokens: 5,
    total_tokens: 25,
    prompt_tokens_details: { cached_tokens: 4 },
  },
});

const request = {
  model: 'claude-x',
  instructions: 'Be brief.\n\nAbout the user: likes tea.',
  input: 'Hi',
  max_output_tokens: 500,
  temperature: 0.3,
  tools: [{ type: 'function', name: 'now', parameters: null, strict: null }],
  tool_choice: 'auto',
  metadata: { app: 'x' },
};

describe('chatCompletionToResponse', () => {
  it('builds a completed response with a message item and echoes the request settings', () => {
    const response = chatCompletionToResponse(completion({ content: 'Hello!' }), request, {
      id: 'resp_1',
      createdAt: 1_800_000_000,
    });
    expect(response).toEqual({
      id: 'resp_1',
      object: 'response',
      created_at: 1_800_000_000,
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.\n\nAbout the user: likes tea.',
      max_output_tokens: 500,
      model: 'claude-x-2026',
      output: [
        {
          type: 'message',
          id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }],
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: 0.3,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: request.tools,
      top_p: 1,
      truncation: 'disabled',
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 25,
      },
      user: null,
      metadata: { app: 'x' },
    });
    expect(responseOutputText(response)).toBe('Hello!');
  });

  it('gives a new resp_ id by default and function_call items for tool calls', () => {
    const response = chatCompletionToResponse(
      completion(
        {
          content: null,
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
      { model: 'claude-x', input: 'x' },
    );
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response.status).toBe('completed');
    expect(response.output).toEqual([
      {
        type: 'function_call',
        id: expect.stringMatching(/^fc_/),
        call_id: 'toolu_1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: expect.stringMatching(/^fc_/),
        call_id: 'toolu_2',
        name: 'now',
        arguments: '{}',
        status: 'completed',
      },
    ]);
    expect(responseOutputText(response)).toBe('');
  });

  it('marks a response cut by the token limit or the content filter incomplete', () => {
    const cut = chatCompletionToResponse(completion({ content: 'Half an ans' }, 'length'), request);
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(cut.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    // an answer the upstream ended at its limit is an answer (recorded, as chat's `length` is)
    expect(responseOutputText(cut)).toBe('Half an ans');
    const filtered = chatCompletionToResponse(completion({ content: '' }, 'content_filter'), request);
    expect(filtered).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
    });
    expect(filtered.output).toEqual([]);
  });

  it('carries a refusal as a refusal content part', () => {
    const response = chatCompletionToResponse(completion({ content: null, refusal: 'I cannot.' }), request);
    expect(response.output[0]).toMatchObject({ content: [{ type: 'refusal', refusal: 'I cannot.' }] });
  });

  it('reads garbage as an empty completed response rather than throwing', () => {
    for (const body of [null, 'x', {}, { choices: [7] }]) {
      const response = chatCompletionToResponse(body, 'not even an object');
      expect(response).toMatchObject({
        object: 'response',
        status: 'completed',
        output: [],
        model: '',
        tools: [],
      });
    }
  });
});

function translate(input: string, size = 7): { output: string; translator: ChatToResponsesStreamTranslator } {
  const translator = new ChatToResponsesStreamTranslator({ request, id: 'resp_s', createdAt: 42 });
  return { output: feedInPieces(translator, input, size), translator };
}

describe('ChatToResponsesStreamTranslator', () => {
  it.each([1, 5, 100, 1_000_000])('translates a text stream fed in %p-byte pieces', (size) => {
    const { output, translator } = translate(textStream(['Hel', 'lo, wö', 'rld 🙂']), size);
    const events = typedEvents(output);

    expect(events.map((event) => event.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.every((event) => event.data.type === event.event)).toBe(true);
    expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_, i) => i));

    const created = events[0].data.response;
    expect(created).toMatchObject({
      id: 'resp_s',
      created_at: 42,
      status: 'in_progress',
      output: [],
      usage: null,
      model: 'gpt-x',
      instructions: request.instructions,
    });
    const itemId: string = events[2].data.item.id;
    expect(events[2].data).toMatchObject({
      output_index: 0,
      item: { type: 'message', role: 'assistant', status: 'in_progress', content: [] },
    });
    expect(events[3].data).toMatchObject({
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    expect(events[4].data).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 4,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      delta: 'Hel',
      logprobs: [],
    });
    expect(events[7].data).toMatchObject({ text: 'Hello, wörld 🙂' });
    expect(events[9].data.item).toMatchObject({
      status: 'completed',
      content: [{ type: 'output_text', text: 'Hello, wörld 🙂' }],
    });
    const completed = events[10].data.response;
    expect(completed).toMatchObject({
      id: 'resp_s',
      status: 'completed',
      usage: { input_tokens: 11, output_tokens: 3, total_tokens: 14 },
    });
    expect(responseOutputText(completed)).toBe('Hello, wörld 🙂');
    expect(translator.text).toBe('Hello, wörld 🙂');
    expect(translator.completed).toBe(true);

    const accumulator = new ResponsesStreamAccumulator();
    accumulator.push(output);
    expect(accumulator.completed).toBe(true);
    expect(accumulator.text).toBe('Hello, wörld 🙂');
  });

  it('writes each piece as soon as its chunk arrives', () => {
    const translator = new ChatToResponsesStreamTranslator({ request });
    const types = (text: string) => typedEvents(text).map((event) => event.event);
    expect(types(translator.push(chatChunk({ role: 'assistant', content: '' })))).toEqual([
      'response.created',
      'response.in_progress',
    ]);
    expect(types(translator.push(chatChunk({ content: 'Hi' })))).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
    ]);
    expect(types(translator.push(chatChunk({}, 'stop')))).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expect(translator.completed).toBe(false);
    expect(types(translator.push(DONE))).toEqual(['response.completed']);
    expect(translator.completed).toBe(true);
  });

  it('translates tool calls into function_call items with argument events', () => {
    const { output } = translate(toolStream(), 13);
    const events = typedEvents(output).map((event) => event.data);
    const added = events.filter((e) => e.type === 'response.output_item.added');
    expect(added.map((e) => [e.output_index, e.item.type, e.item.call_id, e.item.name])).toEqual([
      [0, 'message', undefined, undefined],
      [1, 'function_call', 'call_a', 'get_weather'],
      [2, 'function_call', 'call_b', 'now'],
    ]);
    const argumentDeltas = (index: number) =>
      events
        .filter((e) => e.type === 'response.function_call_arguments.delta' && e.output_index === index)
        .map((e) => e.delta as string)
        .join('');
    expect(JSON.parse(argumentDeltas(1))).toEqual({ city: 'Paris' });
    expect(
      events
        .filter((e) => e.type === 'response.function_call_arguments.done')
        .map((e) => [e.name, e.arguments]),
    ).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['now', '{}'],
    ]);
    const final = events.at(-1);
    expect(final.type).toBe('response.completed');
    expect(final.response.output.map((item: { type: string }) => item.type)).toEqual([
      'message',
      'function_call',
      'function_call',
    ]);
    expect(final.response.output[1]).toMatchObject({
      status: 'completed',
      call_id: 'call_a',
      arguments: '{"city":"Paris"}',
    });
    // A call's item is done before the next item starts, as the real API streams them.
    const order = events
      .filter((e) => e.type === 'response.output_item.added' || e.type === 'response.output_item.done')
      .map((e) => `${e.type.slice(21)}:${e.output_index}`);
    expect(order).toEqual(['added:0', 'done:0', 'added:1', 'done:1', 'added:2', 'done:2']);
  });

  it('finishes each interleaved parallel call only once its arguments are whole, one item after the other', () => {
    const call = (index: number, fields: Record<string, unknown>) =>
      chatChunk({ tool_calls: [{ index, ...fields }] });
    const input = [
      call(0, { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }),
      call(0, { function: { arguments: '{"city":' } }),
      call(1, { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{"zone":' } }),
      call(0, { function: { arguments: '"Paris"}' } }),
      call(1, { function: { arguments: '"CET"}' } }),
      chatChunk({}, 'tool_calls'),
      DONE,
    ].join('');
    const events = typedEvents(translate(input).output).map((e) => e.data);
    const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item.arguments);
    expect(done).toEqual(['{"city":"Paris"}', '{"zone":"CET"}']);
    const finished = new Set<number>();
    const order: string[] = [];
    for (const event of events) {
      if (event.type === 'response.function_call_arguments.delta') {
        expect(finished.has(event.output_index)).toBe(false);
      }
      if (event.type === 'response.output_item.done') finished.add(event.output_index);
      if (event.type === 'response.output_item.added' || event.type === 'response.output_item.done') {
        order.push(`${event.type.slice(21)}:${event.output_index}`);
      }
    }
    expect(order).toEqual(['added:0', 'done:0', 'added:1', 'done:1']);
  });

  it('fails a stream that ended without one valid chunk, rather than completing an empty response', () => {
    const { output, translator } = translate('data: {"trunc\n\n' + DONE);
    expect(typedEvents(output).map((e) => e.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'error',
      'response.failed',
    ]);
    expect(translator.answered).toBe(false);
  });

  it('ends with response.incomplete when the token limit cut the answer', () => {
    const { output, translator } = translate(textStream(['cut sho'], 'length'));
    const last = typedEvents(output).at(-1)?.data;
    expect(last).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    expect(last.response.output[0].status).toBe('incomplete');
    expect(translator.completed).toBe(false);
    expect(translator.responseStatus).toBe('incomplete');
  });

  it('turns an in-stream error chunk into an error event and response.failed, and reads nothing after it', () => {
    const input = [
      chatChunk({ content: 'partial' }),
      chatEvent({ error: { message: 'Overloaded', type: 'overloaded_error', code: 'overloaded' } }),
      chatChunk({ content: 'ignored' }),
      DONE,
    ].join('');
    const { output, translator } = translate(input);
    const events = typedEvents(output);
    expect(events.at(-2)?.data).toEqual({
      type: 'error',
      sequence_number: events.length - 2,
      code: 'overloaded',
      message: 'Overloaded',
      param: null,
      error: { type: 'overloaded_error', code: 'overloaded', message: 'Overloaded', param: null },
    });
    expect(events.at(-1)?.data).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'overloaded', message: 'Overloaded' } },
    });
    expect(events.map((e) => e.event)).not.toContain('response.completed');
    expect(translator.completed).toBe(false);
    expect(translator.text).toBe('partial');

    const accumulator = new ResponsesStreamAccumulator();
    accumulator.push(output);
    expect(accumulator.completed).toBe(false);
    expect(accumulator.outcome).toBe('error');
  });

  it('writes an error and response.failed for an upstream that broke off, starting the response if need be', () => {
    const translator = new ChatToResponsesStreamTranslator({ request });
    const events = typedEvents(translator.fail('The upstream provider could not be reached.'));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'error',
      'response.failed',
    ]);
    expect(events[2].data).toMatchObject({ code: 'server_error', error: { type: 'server_error' } });
    expect(events[3].data.response.error).toEqual({
      code: 'server_error',
      message: 'The upstream provider could not be reached.',
    });
    expect(translator.fail('again')).toBe('');
    expect(translator.push(textStream(['x']))).toBe('');
  });

  it('ends the response when the body ends after a finish_reason without [DONE]', () => {
    const { output, translator } = translate([chatChunk({ content: 'ok' }), chatChunk({}, 'stop')].join(''));
    expect(typedEvents(output).at(-1)?.event).toBe('response.completed');
    expect(translator.completed).toBe(true);
  });

  it('invents no ending for a cut stream', () => {
    const { output, translator } = translate(
      [chatChunk({ role: 'assistant' }), chatChunk({ content: 'par' })].join(''),
    );
    const types = typedEvents(output).map((e) => e.event);
    expect(types).not.toContain('response.completed');
    expect(types).not.toContain('response.output_item.done');
    expect(translator.completed).toBe(false);
    expect(translator.text).toBe('par');
  });

  it('streams a refusal as a refusal content part', () => {
    const { output } = translate(
      [chatChunk({ refusal: 'No' }), chatChunk({ refusal: ' way' }), chatChunk({}, 'stop'), DONE].join(''),
    );
    const events = typedEvents(output).map((e) => e.data);
    expect(events.filter((e) => e.type === 'response.refusal.delta').map((e) => e.delta)).toEqual([
      'No',
      ' way',
    ]);
    expect(events.find((e) => e.type === 'response.refusal.done')).toMatchObject({ refusal: 'No way' });
    expect(events.at(-1).response.output[0].content).toEqual([{ type: 'refusal', refusal: 'No way' }]);
  });

  it('reports usage with cached tokens in the completed response', () => {
    const { output } = translate(
      [chatChunk({ content: 'x' }), chatChunk({}, 'stop'), usageEvent(50, 2, 30), DONE].join(''),
    );
    expect(typedEvents(output).at(-1)?.data.response.usage).toEqual({
      input_tokens: 50,
      input_tokens_details: { cached_tokens: 30 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 52,
    });
  });

  it('survives garbage without throwing', () => {
    const translator = new ChatToResponsesStreamTranslator({ request: null });
    expect(() =>
      translator.push(
        'data: nope\n\ndata: 7\n\n' + chatEvent({ choices: [{ index: 0, delta: { tool_calls: [5] } }] }),
      ),
    ).not.toThrow();
    expect(translator.malformedEvents).toBe(3);
    expect(() => translator.end()).not.toThrow();
    expect(translator.completed).toBe(false);
  });
});

describe('formatResponsesErrorEvent', () => {
  it('continues the numbering of a verbatim stream with an error the side reader counts as a failure', () => {
    const event = formatResponsesErrorEvent(7, { message: 'The upstream provider could not be reached.' });
    expect(typedEvents(event)).toEqual([
      {
        event: 'error',
        data: {
          type: 'error',
          sequence_number: 7,
          code: 'server_error',
          message: 'The upstream provider could not be reached.',
          param: null,
          error: {
            type: 'server_error',
            code: 'server_error',
            message: 'The upstream provider could not be reached.',
            param: null,
          },
        },
      },
    ]);
    const accumulator = new ResponsesStreamAccumulator();
    accumulator.push(event);
    expect(accumulator.outcome).toBe('error');
  });
});
