import { feedInPieces } from '../../test/support/protocol-fixtures';
import { anthropicMessageText, AnthropicStreamAccumulator } from './anthropic-stream-accumulator';
import { ChatStreamDecoder } from './chat-stream-decoder';
import { ResponsesStreamAccumulator, responseOutputText } from './responses-stream-accumulator';

const typed = (type: string, payload: Record<string, unknown>, sequence?: number): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...(sequence === undefined ? {} : { sequence_number: sequence }), ...payload })}\n\n`;

const completedResponse = (text: string, status = 'completed') => ({
  id: 'resp_1',
  object: 'response',
  status,
  output: [
    { type: 'reasoning', id: 'rs_1', summary: [] },
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    },
  ],
});

const RESPONSES_OPENING = [
  typed('response.created', { response: { id: 'resp_1', status: 'in_progress', output: [] } }, 0),
  typed('response.in_progress', { response: { id: 'resp_1', status: 'in_progress', output: [] } }, 1),
  typed(
    'response.output_text.delta',
    { item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Bon' },
    2,
  ),
  typed(
    'response.output_text.delta',
    { item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'jour 🙂' },
    3,
  ),
].join('');

function accumulate(input: string, size = 5): ResponsesStreamAccumulator {
  const accumulator = new ResponsesStreamAccumulator();
  feedInPieces(
    {
      push: (chunk) => {
        accumulator.push(chunk);
        return '';
      },
      end: () => {
        accumulator.end();
        return '';
      },
    },
    input,
    size,
  );
  return accumulator;
}

describe('ResponsesStreamAccumulator', () => {
  it.each([1, 7, 10_000])(
    'is complete after response.completed, with the completed text (%p-byte pieces)',
    (size) => {
      const accumulator = accumulate(
        RESPONSES_OPENING + typed('response.completed', { response: completedResponse('Bonjour 🙂') }, 4),
        size,
      );
      expect(accumulator.completed).toBe(true);
      expect(accumulator.outcome).toBe('completed');
      expect(accumulator.text).toBe('Bonjour 🙂');
      expect(accumulator.id).toBe('resp_1');
      expect(accumulator.lastSequenceNumber).toBe(4);
    },
  );

  it('prefers the completed response text, and falls back to the deltas when it has no output', () => {
    const authoritative = accumulate(
      RESPONSES_OPENING + typed('response.completed', { response: completedResponse('Final text') }, 4),
    );
    expect(authoritative.text).toBe('Final text');
    const sparse = accumulate(
      RESPONSES_OPENING + typed('response.completed', { response: { id: 'resp_1' } }, 4),
    );
    expect(sparse.completed).toBe(true);
    expect(sparse.text).toBe('Bonjour 🙂');
  });

  it.each([
    [
      'response.failed',
      typed('response.failed', {
        response: { status: 'failed', error: { code: 'server_error', message: 'boom' } },
      }),
      'failed',
      { code: 'server_error', message: 'boom' },
    ],
    [
      'a flat error event',
      typed('error', { code: 'server_error', message: 'boom', param: null }),
      'error',
      expect.objectContaining({ code: 'server_error', message: 'boom' }),
    ],
    [
      'a nested error event',
      typed('error', { error: { type: 'server_error', code: 'x', message: 'boom' } }),
      'error',
      { type: 'server_error', code: 'x', message: 'boom' },
    ],
  ])('is neither complete nor answered after %s', (_what, ending, outcome, error) => {
    const accumulator = accumulate(RESPONSES_OPENING + ending);
    expect(accumulator.completed).toBe(false);
    expect(accumulator.answered).toBe(false);
    expect(accumulator.outcome).toBe(outcome);
    expect(accumulator.error).toEqual(error);
    expect(accumulator.text).toBe('Bonjour 🙂');
  });

  it('is answered, not complete, after response.incomplete, with the response text', () => {
    const accumulator = accumulate(
      RESPONSES_OPENING +
        typed('response.incomplete', { response: completedResponse('Bonjour', 'incomplete') }),
    );
    expect(accumulator.completed).toBe(false);
    expect(accumulator.answered).toBe(true);
    expect(accumulator.outcome).toBe('incomplete');
    expect(accumulator.text).toBe('Bonjour');
  });

  it('lets the first terminal event decide: a completed event after an error does not count', () => {
    const accumulator = accumulate(
      RESPONSES_OPENING +
        typed('error', { code: 'server_error', message: 'boom' }) +
        typed('response.completed', { response: completedResponse('x') }),
    );
    expect(accumulator.completed).toBe(false);
  });

  it('is not complete for a cut stream, even with a half-written completed event', () => {
    const whole =
      RESPONSES_OPENING + typed('response.completed', { response: completedResponse('Bonjour 🙂') }, 4);
    const accumulator = accumulate(whole.slice(0, whole.length - 10));
    expect(accumulator.completed).toBe(false);
    expect(accumulator.outcome).toBe('cut');
    expect(accumulator.text).toBe('Bonjour 🙂');
  });

  it('reads the event type from the data, or from the event line when the data has none', () => {
    const accumulator = accumulate(
      'event: response.output_text.delta\ndata: {"delta":"a"}\n\n' +
        'event: response.completed\ndata: {"response":{"status":"completed","output":[]}}\n\n',
    );
    expect(accumulator.completed).toBe(true);
    expect(accumulator.text).toBe('');
  });

  it('counts garbage without throwing', () => {
    const accumulator = accumulate('data: nope\n\ndata: {"no":"type"}\n\n: comment\n\n' + RESPONSES_OPENING);
    expect(accumulator.malformedEvents).toBe(2);
    expect(accumulator.text).toBe('Bonjour 🙂');
  });
});

describe('responseOutputText', () => {
  it('joins the output_text parts of the assistant message items of a completed response', () => {
    expect(
      responseOutputText({
        object: 'response',
        status: 'completed',
        output: [
          {
            type: 'message',
            role: 'assistant',
            content: [
              { type: 'output_text', text: 'Part one, ' },
              { type: 'refusal', refusal: 'x' },
              { type: 'output_text', text: 'part two.' },
            ],
          },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Second item.' }] },
        ],
      }),
    ).toBe('Part one, part two.\nSecond item.');
  });

  it('is null unless the upstream ended the answer (completed, or incomplete at a limit)', () => {
    for (const status of ['failed', 'in_progress', 'cancelled', 'queued']) {
      expect(responseOutputText(completedResponse('x', status))).toBeNull();
    }
    expect(responseOutputText(completedResponse('x', 'incomplete'))).toBe('x');
    expect(responseOutputText({ output: [], error: { message: 'x' } })).toBeNull();
    expect(responseOutputText({ output: [], incomplete_details: { reason: 'max_output_tokens' } })).toBe('');
    expect(responseOutputText({ output: [] })).toBe('');
    for (const garbage of [null, 'x', [], { output: 'x' }]) expect(responseOutputText(garbage)).toBeNull();
  });
});

const anthropic = (type: string, payload: Record<string, unknown> = {}): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

const MESSAGE_STREAM = [
  anthropic('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      usage: { input_tokens: 3, output_tokens: 1 },
    },
  }),
  anthropic('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropic('ping'),
  anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Grüß ' } }),
  anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'dich 🙂' } }),
  anthropic('content_block_stop', { index: 0 }),
  anthropic('content_block_start', {
    index: 1,
    content_block: { type: 'tool_use', id: 't', name: 'f', input: {} },
  }),
  anthropic('content_block_delta', {
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"a":1}' },
  }),
  anthropic('content_block_stop', { index: 1 }),
  anthropic('message_delta', {
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 9 },
  }),
];

describe('AnthropicStreamAccumulator', () => {
  it.each([1, 6, 10_000])('is complete after message_stop, with the text deltas (%p-byte pieces)', (size) => {
    const accumulator = new AnthropicStreamAccumulator();
    feedInPieces(
      { push: (c) => (accumulator.push(c), ''), end: () => (accumulator.end(), '') },
      [...MESSAGE_STREAM, anthropic('message_stop')].join(''),
      size,
    );
    expect(accumulator.completed).toBe(true);
    expect(accumulator.text).toBe('Grüß dich 🙂');
    expect(accumulator.stopReason).toBe('tool_use');
    expect(accumulator.id).toBe('msg_1');
  });

  it('is not complete without message_stop, or with an error event before it', () => {
    const cut = new AnthropicStreamAccumulator();
    cut.push(MESSAGE_STREAM.join(''));
    cut.end();
    expect(cut.completed).toBe(false);
    expect(cut.text).toBe('Grüß dich 🙂');

    const failed = new AnthropicStreamAccumulator();
    failed.push(
      [
        ...MESSAGE_STREAM.slice(0, 4),
        anthropic('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
        anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ignored' } }),
        anthropic('message_stop'),
      ].join(''),
    );
    expect(failed.completed).toBe(false);
    expect(failed.error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
    expect(failed.text).toBe('Grüß ');
  });

  it('keeps the initial text of a text block that starts with some', () => {
    const accumulator = new AnthropicStreamAccumulator();
    accumulator.push(
      anthropic('content_block_start', { index: 0, content_block: { type: 'text', text: 'Pre' } }) +
        anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'fix' } }),
    );
    expect(accumulator.text).toBe('Prefix');
  });

  it('counts garbage without throwing', () => {
    const accumulator = new AnthropicStreamAccumulator();
    accumulator.push('data: {{\n\ndata: []\n\nevent: x\ndata: null\n\n');
    accumulator.end();
    expect(accumulator.malformedEvents).toBe(3);
    expect(accumulator.completed).toBe(false);
  });
});

describe('anthropicMessageText', () => {
  it('joins the text blocks of a message', () => {
    expect(
      anthropicMessageText({
        type: 'message',
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'One ' },
          { type: 'tool_use', id: 't', name: 'f', input: {} },
          { type: 'text', text: 'two.' },
        ],
      }),
    ).toBe('One two.');
    expect(anthropicMessageText({ type: 'message', content: [] })).toBe('');
  });

  it('is null for anything that is not a message', () => {
    for (const garbage of [null, 'x', { type: 'error', error: {} }, { type: 'message', content: 'x' }]) {
      expect(anthropicMessageText(garbage)).toBeNull();
    }
  });
});

describe('ChatStreamDecoder', () => {
  it('numbers tool calls that come without an index by their ids', () => {
    const decoder = new ChatStreamDecoder();
    const chunk = (toolCall: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: 'c', choices: [{ delta: { tool_calls: [toolCall] } }] })}\n\n`;
    const pieces = decoder.push(
      chunk({ id: 'call_a', function: { name: 'a', arguments: '{"x"' } }) +
        chunk({ function: { arguments: ':1}' } }) +
        chunk({ id: 'call_b', function: { name: 'b', arguments: '{}' } }),
    );
    expect(pieces.filter((piece) => piece.type !== 'start')).toEqual([
      { type: 'tool-call', index: 0, id: 'call_a', name: 'a' },
      { type: 'tool-arguments', index: 0, fragment: '{"x"' },
      { type: 'tool-arguments', index: 0, fragment: ':1}' },
      { type: 'tool-call', index: 1, id: 'call_b', name: 'b' },
      { type: 'tool-arguments', index: 1, fragment: '{}' },
    ]);
  });

  it('gives a tool call without an id one of its own', () => {
    const pieces = new ChatStreamDecoder().push(
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'f' } }] } }] })}\n\n`,
    );
    expect(pieces[1]).toMatchObject({
      type: 'tool-call',
      index: 0,
      name: 'f',
      id: expect.stringMatching(/^call_/),
    });
  });

  it('reads an error given as a string', () => {
    expect(new ChatStreamDecoder().push('data: {"error":"upstream exploded"}\n\n')).toEqual([
      { type: 'error', error: { message: 'upstream exploded' } },
    ]);
  });
});
