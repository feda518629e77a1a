import { toAnthropicRequest } from './anthropic-translation';
import { translationError } from '../../test/support/protocol-fixtures';
import { responsesToChatRequest } from './responses-to-chat-request';

const base = (extra: Record<string, unknown> = {}) => ({ model: 'claude-x', input: 'Hi', ...extra });

const rejection = (body: unknown) => translationError(() => responsesToChatRequest(body));

describe('responsesToChatRequest', () => {
  it('maps a string input and instructions', () => {
    expect(responsesToChatRequest(base({ instructions: 'Be brief.' }))).toEqual({
      model: 'claude-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(responsesToChatRequest(base({ instructions: null })).messages).toEqual([
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('maps max_output_tokens, sampling, user, and streaming with usage', () => {
    expect(
      responsesToChatRequest(
        base({ max_output_tokens: 300, temperature: 0.4, top_p: 0.9, user: 'u1', stream: true }),
      ),
    ).toEqual({
      model: 'claude-x',
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 300,
      temperature: 0.4,
      top_p: 0.9,
      user: 'u1',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('maps message items with input_text and input_image parts, assistant output_text, system and developer', () => {
    const result = responsesToChatRequest(
      base({
        input: [
          { role: 'developer', content: 'Use metric units.' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is in this picture?' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
              { type: 'input_image', image_url: 'https://example.com/a.jpg', detail: 'original' },
            ],
          },
          {
            type: 'message',
            id: 'msg_1',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'A cat.', annotations: [] }],
          },
          { role: 'system', content: [{ type: 'input_text', text: 'Answer in French.' }] },
          { role: 'user', content: 'And now?' },
        ],
      }),
    );
    expect(result.messages).toEqual([
      { role: 'developer', content: 'Use metric units.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
        ],
      },
      { role: 'assistant', content: 'A cat.' },
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'And now?' },
    ]);
  });

  it('attaches function_call items to the assistant message and maps function_call_output to tool messages', () => {
    const result = responsesToChatRequest(
      base({
        input: [
          { role: 'user', content: 'Weather in Paris and the time?' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_1',
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
          },
          { type: 'function_call', call_id: 'call_2', name: 'now', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
          {
            type: 'function_call_output',
            call_id: 'call_2',
            output: [{ type: 'input_text', text: '12:00' }],
          },
          { type: 'function_call', call_id: 'call_3', name: 'now', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_3', output: '12:01' },
        ],
      }),
    );
    expect(result.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and the time?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_2', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'now', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_3', content: '12:01' },
    ]);
    // The pivot must be something the Anthropic translation accepts.
    expect(toAnthropicRequest(result).messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
  });

  it('maps function tools, tool_choice and parallel_tool_calls', () => {
    const tools = [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather by city',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: true,
      },
      { type: 'function', name: 'now', parameters: null, strict: null },
    ];
    const result = responsesToChatRequest(
      base({ tools, tool_choice: 'required', parallel_tool_calls: false }),
    );
    expect(result.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather by city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
      },
      { type: 'function', function: { name: 'now' } },
    ]);
    expect(result).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
    expect(
      responsesToChatRequest(base({ tools, tool_choice: { type: 'function', name: 'now' } })).tool_choice,
    ).toEqual({
      type: 'function',
      function: { name: 'now' },
    });
    expect(
      responsesToChatRequest(base({ tool_choice: 'auto', parallel_tool_calls: true })),
    ).not.toHaveProperty('tool_choice');
  });

  it('maps text.format to response_format', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    expect(
      responsesToChatRequest(
        base({
          text: { format: { type: 'json_schema', name: 'answer', schema, strict: true, description: 'd' } },
        }),
      ).response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema, strict: true, description: 'd' },
    });
    expect(
      responsesToChatRequest(base({ text: { format: { type: 'json_object' } } })).response_format,
    ).toEqual({
      type: 'json_object',
    });
    expect(
      responsesToChatRequest(base({ text: { format: { type: 'text' }, verbosity: 'low' } })),
    ).not.toHaveProperty('response_format');
  });

  it('accepts what has no effect on a translated answer: store false, empty reasoning, include, metadata', () => {
    expect(() =>
      responsesToChatRequest(
        base({
          store: false,
          reasoning: { effort: null, summary: null },
          include: ['message.output_text.logprobs'],
          metadata: { a: 'b' },
          truncation: 'auto',
          previous_response_id: null,
        }),
      ),
    ).not.toThrow();
  });

  it.each([
    ['a body that is not an object', 'hi', 'body'],
    ['a missing model', { input: 'x' }, 'model'],
    ['a missing input', { model: 'm' }, 'input'],
    ['an empty input', base({ input: [] }), 'input'],
    ['input of the wrong type', base({ input: 42 }), 'input'],
    ['previous_response_id', base({ previous_response_id: 'resp_1' }), 'previous_response_id'],
    ['a conversation', base({ conversation: 'conv_1' }), 'conversation'],
    ['a stored prompt', base({ prompt: { id: 'pmpt_1' } }), 'prompt'],
    ['store: true', base({ store: true }), 'store'],
    ['store of the wrong type', base({ store: 'yes' }), 'store'],
    ['background', base({ background: true }), 'background'],
    ['reasoning effort', base({ reasoning: { effort: 'high' } }), 'reasoning.effort'],
    ['instructions that are not a string', base({ instructions: ['x'] }), 'instructions'],
    ['an item that is not an object', base({ input: ['x'] }), 'input[0]'],
    ['an unknown role', base({ input: [{ role: 'tool', content: 'x' }] }), 'input[0].role'],
    ['a reasoning item', base({ input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }), 'input[0].type'],
    ['an item reference', base({ input: [{ type: 'item_reference', id: 'msg_1' }] }), 'input[0].type'],
    ['a web search call item', base({ input: [{ type: 'web_search_call', id: 'ws' }] }), 'input[0].type'],
    [
      'an input file',
      base({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }),
      'input[0].content[0].type',
    ],
    [
      'an image by file id',
      base({
        input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1', detail: 'auto' }] }],
      }),
      'input[0].content[0].file_id',
    ],
    [
      'an image in a system message',
      base({ input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x' }] }] }),
      'input[0].content[0].type',
    ],
    [
      'a function call without call_id',
      base({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }),
      'input[0].call_id',
    ],
    [
      'a function call output with an image',
      base({
        input: [
          {
            type: 'function_call_output',
            call_id: 'c',
            output: [{ type: 'input_image', image_url: 'https://x' }],
          },
        ],
      }),
      'input[0].output[0].type',
    ],
    ['a built-in tool', base({ tools: [{ type: 'web_search' }] }), 'tools[0].type'],
    ['an MCP tool', base({ tools: [{ type: 'mcp', server_label: 'x' }] }), 'tools[0].type'],
    ['a tool without a name', base({ tools: [{ type: 'function', parameters: {} }] }), 'tools[0].name'],
    [
      'allowed_tools choice',
      base({ tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }),
      'tool_choice',
    ],
    ['a tool_choice of the wrong type', base({ tool_choice: 7 }), 'tool_choice'],
    ['max_output_tokens of zero', base({ max_output_tokens: 0 }), 'max_output_tokens'],
    ['temperature as a string', base({ temperature: '1' }), 'temperature'],
    ['stream as a string', base({ stream: 'true' }), 'stream'],
    ['a user that is not a string', base({ user: 5 }), 'user'],
    [
      'a json_schema without schema',
      base({ text: { format: { type: 'json_schema', name: 'x' } } }),
      'text.format.schema',
    ],
    ['an unknown text format', base({ text: { format: { type: 'grammar' } } }), 'text.format.type'],
  ])('rejects %s, naming the field', (_what, body, param) => {
    expect(rejection(body).param).toBe(param);
  });

  it('passes huge and unicode text through untouched', () => {
    const huge = '漢字🙂'.repeat(300_000);
    expect(
      responsesToChatRequest(base({ input: [{ role: 'user', content: huge }] })).messages[0].content,
    ).toBe(huge);
  });
});
