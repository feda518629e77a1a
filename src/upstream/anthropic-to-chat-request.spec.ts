import { anthropicToChatRequest } from './anthropic-to-chat-request';
import { translationError } from '../../test/support/protocol-fixtures';

const base = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-x',
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
});

const rejection = (body: unknown) => translationError(() => anthropicToChatRequest(body));

describe('anthropicToChatRequest', () => {
  it('maps a simple request: model, max_tokens, a string user turn', () => {
    expect(anthropicToChatRequest(base())).toEqual({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 256,
    });
  });

  it('puts a string system, or text blocks joined, first as a system message', () => {
    expect(anthropicToChatRequest(base({ system: 'Be brief.' })).messages[0]).toEqual({
      role: 'system',
      content: 'Be brief.',
    });
    const blocks = anthropicToChatRequest(
      base({
        system: [
          { type: 'text', text: 'You are a CLI.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: '' },
          { type: 'text', text: 'Use tools.' },
        ],
      }),
    );
    expect(blocks.messages[0]).toEqual({ role: 'system', content: 'You are a CLI.\n\nUse tools.' });
    expect(anthropicToChatRequest(base({ system: '' })).messages).toHaveLength(1);
    expect(anthropicToChatRequest(base({ system: [] })).messages).toHaveLength(1);
  });

  it('maps sampling, stop sequences, streaming with usage, and metadata.user_id', () => {
    const result = anthropicToChatRequest(
      base({
        temperature: 0.2,
        top_p: 0.8,
        stop_sequences: ['END', '', 'STOP'],
        stream: true,
        metadata: { user_id: 'user-42' },
      }),
    );
    expect(result).toMatchObject({
      temperature: 0.2,
      top_p: 0.8,
      stop: ['END', 'STOP'],
      stream: true,
      stream_options: { include_usage: true },
      user: 'user-42',
    });
    const longId = `user_${'a'.repeat(64)}_account_x_session_y`;
    expect(anthropicToChatRequest(base({ metadata: { user_id: longId } }))).not.toHaveProperty('user');
    expect(anthropicToChatRequest(base({ metadata: { user_id: 'u'.repeat(64) } })).user).toBe('u'.repeat(64));
    const plain = anthropicToChatRequest(base({ stream: false, stop_sequences: [], metadata: {} }));
    for (const field of ['stream', 'stream_options', 'stop', 'user']) expect(plain).not.toHaveProperty(field);
  });

  it('maps text and image blocks of a user turn to content parts', () => {
    const result = anthropicToChatRequest(
      base({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
      }),
    );
    expect(result.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('keeps a single text block as a plain string', () => {
    const result = anthropicToChatRequest(
      base({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] }),
    );
    expect(result.messages).toEqual([{ role: 'user', content: 'x' }]);
  });

  it('turns tool_use into tool_calls and tool_result blocks into tool messages ahead of the user text', () => {
    const result = anthropicToChatRequest(
      base({
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Need the tool.', signature: 'sig' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
              {
                type: 'tool_result',
                tool_use_id: 'toolu_2',
                content: [
                  { type: 'text', text: '12:00' },
                  { type: 'text', text: 'UTC' },
                ],
                is_error: false,
              },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
      }),
    );
    expect(result.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '12:00\nUTC' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
  });

  it('gives an assistant turn of only tool calls null content, and a tool_result without content an empty one', () => {
    const result = anthropicToChatRequest(
      base({
        messages: [
          { role: 'user', content: 'Go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'run', input: { a: [1, 2] } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
        ],
      }),
    );
    expect(result.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 't', type: 'function', function: { name: 'run', arguments: '{"a":[1,2]}' } }],
    });
    expect(result.messages[2]).toEqual({ role: 'tool', tool_call_id: 't', content: '' });
    expect(result.messages).toHaveLength(3);
  });

  it('maps tools and every tool_choice, and disable_parallel_tool_use', () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Weather by city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'custom', name: 'now', input_schema: { type: 'object' }, strict: true },
    ];
    const result = anthropicToChatRequest(base({ tools }));
    expect(result.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather by city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      { type: 'function', function: { name: 'now', parameters: { type: 'object' }, strict: true } },
    ]);
    expect(result).not.toHaveProperty('tool_choice');
    const choice = (tool_choice: unknown) => anthropicToChatRequest(base({ tools, tool_choice }));
    expect(choice({ type: 'auto' }).tool_choice).toBe('auto');
    expect(choice({ type: 'any' }).tool_choice).toBe('required');
    expect(choice({ type: 'none' }).tool_choice).toBe('none');
    expect(choice({ type: 'tool', name: 'now' }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'now' },
    });
    expect(choice({ type: 'auto', disable_parallel_tool_use: true })).toMatchObject({
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(choice({ type: 'auto', disable_parallel_tool_use: false })).not.toHaveProperty(
      'parallel_tool_calls',
    );
    expect(anthropicToChatRequest(base({ tools: [], tool_choice: { type: 'any' } }))).not.toHaveProperty(
      'tools',
    );
  });

  it('maps output_config.format json_schema to response_format and ignores thinking', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const result = anthropicToChatRequest(
      base({
        output_config: { format: { type: 'json_schema', schema }, effort: 'high' },
        thinking: { type: 'enabled', budget_tokens: 2048 },
      }),
    );
    expect(result.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema, strict: true },
    });
    expect(result).not.toHaveProperty('thinking');
  });

  it.each([
    ['a body that is not an object', [], 'body'],
    ['a missing model', { messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ['a model that is not a string', base({ model: 7 }), 'model'],
    ['messages that are not an array', base({ messages: 'hi' }), 'messages'],
    ['empty messages', base({ messages: [] }), 'messages'],
    ['a message that is not an object', base({ messages: ['hi'] }), 'messages[0]'],
    ['an unknown role', base({ messages: [{ role: 'system', content: 'x' }] }), 'messages[0].role'],
    ['content of the wrong type', base({ messages: [{ role: 'user', content: 5 }] }), 'messages[0].content'],
    [
      'a block that is not an object',
      base({ messages: [{ role: 'user', content: [null] }] }),
      'messages[0].content[0]',
    ],
    [
      'an unknown block type',
      base({ messages: [{ role: 'user', content: [{ type: 'hologram' }] }] }),
      'messages[0].content[0].type',
    ],
    [
      'a document block',
      base({ messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }),
      'messages[0].content[0].type',
    ],
    [
      'a text block without text',
      base({ messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }),
      'messages[0].content[0].text',
    ],
    [
      'an image from the Files API',
      base({
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }],
      }),
      'messages[0].content[0].source.type',
    ],
    [
      'an image inside a tool result',
      base({
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }],
          },
        ],
      }),
      'messages[0].content[0].content[0].type',
    ],
    [
      'a tool_result without tool_use_id',
      base({ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }),
      'messages[0].content[0].tool_use_id',
    ],
    [
      'a server tool result in assistant history',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'web_search_tool_result', tool_use_id: 's', content: [] }] },
          { role: 'user', content: 'y' },
        ],
      }),
      'messages[1].content[0].type',
    ],
    [
      'a final assistant message (prefill)',
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '{' },
        ],
      }),
      'messages[1]',
    ],
    ['a non-text system block', base({ system: [{ type: 'image', source: {} }] }), 'system[0].type'],
    ['a system of the wrong type', base({ system: 42 }), 'system'],
    [
      'a server tool',
      base({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
      'tools[0].type',
    ],
    ['a tool without input_schema', base({ tools: [{ name: 'x' }] }), 'tools[0].input_schema'],
    ['tools that are not an array', base({ tools: {} }), 'tools'],
    [
      'an unknown tool_choice',
      base({ tools: [{ name: 'x', input_schema: {} }], tool_choice: { type: 'maybe' } }),
      'tool_choice.type',
    ],
    ['top_k', base({ top_k: 5 }), 'top_k'],
    ['MCP servers', base({ mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }] }), 'mcp_servers'],
    ['max_tokens of zero', base({ max_tokens: 0 }), 'max_tokens'],
    ['max_tokens as a string', base({ max_tokens: '100' }), 'max_tokens'],
    ['temperature as a string', base({ temperature: 'hot' }), 'temperature'],
    ['stream as a string', base({ stream: 'yes' }), 'stream'],
    ['stop_sequences that are not strings', base({ stop_sequences: ['a', 1] }), 'stop_sequences[1]'],
    ['metadata.user_id that is not a string', base({ metadata: { user_id: 5 } }), 'metadata.user_id'],
    [
      'a non-json_schema output format',
      base({ output_config: { format: { type: 'xml' } } }),
      'output_config.format.type',
    ],
  ])('rejects %s, naming the field', (_what, body, param) => {
    expect(rejection(body).param).toBe(param);
  });

  it('passes huge and unicode text through untouched', () => {
    const huge = 'é🙂'.repeat(500_000);
    const result = anthropicToChatRequest(base({ messages: [{ role: 'user', content: huge }] }));
    expect(result.messages[0].content).toBe(huge);
  });
});
