import {
  anthropicQuestion,
  anthropicTurnUserTexts,
  responsesQuestion,
  responsesTurnUserTexts,
} from './inbound-turns';

describe('Responses question and turn', () => {
  it('takes a string input as both', () => {
    expect(responsesQuestion({ input: 'What is my name?' })).toBe('What is my name?');
    expect(responsesTurnUserTexts({ input: 'What is my name?' })).toEqual(['What is my name?']);
    expect(responsesTurnUserTexts({ input: '' })).toEqual([]);
  });

  it('takes the last user message item as the question, its input_text parts joined', () => {
    const body = {
      input: [
        { role: 'user', content: 'First question' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'First answer' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look at this' },
            { type: 'input_image', image_url: 'https://x/y.png' },
            { type: 'input_text', text: 'and tell me.' },
          ],
        },
        { role: 'developer', content: 'Be brief.' },
      ],
    };
    expect(responsesQuestion(body)).toBe('Look at this\nand tell me.');
    expect(responsesTurnUserTexts(body)).toEqual(['Look at this\nand tell me.']);
  });

  it('records the user messages after the last assistant item, a function call counting as one', () => {
    const body = {
      input: [
        { role: 'user', content: 'Old' },
        { role: 'assistant', content: 'Old answer' },
        { role: 'user', content: 'Weather?' },
        { type: 'function_call', call_id: 'c', name: 'w', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'sunny' },
        { role: 'user', content: [{ type: 'input_text', text: 'Thanks! And tomorrow?' }] },
        { role: 'user', content: 'In Paris.' },
      ],
    };
    expect(responsesTurnUserTexts(body)).toEqual(['Thanks! And tomorrow?', 'In Paris.']);
    expect(responsesQuestion(body)).toBe('In Paris.');
  });

  it('keeps the question of a tool-output turn, and records no user text for it', () => {
    const body = {
      input: [
        { role: 'user', content: 'Weather?' },
        { type: 'function_call', call_id: 'c', name: 'w', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'sunny' },
      ],
    };
    expect(responsesQuestion(body)).toBe('Weather?');
    expect(responsesTurnUserTexts(body)).toEqual([]);
  });

  it('reads malformed bodies as no text', () => {
    for (const body of [null, 'x', {}, { input: 5 }, { input: [null, 7, { role: 'user', content: 9 }] }]) {
      expect(responsesQuestion(body)).toBe('');
      expect(responsesTurnUserTexts(body)).toEqual([]);
    }
  });
});

describe('Messages question and turn', () => {
  const body = {
    messages: [
      { role: 'user', content: 'I live in Lyon.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Noted.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What should I wear?' },
          { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
          { type: 'text', text: 'Here is my closet.' },
        ],
      },
      { role: 'user', content: 'Be quick.' },
    ],
  };

  it('takes the user texts after the last assistant message, text blocks only', () => {
    expect(anthropicTurnUserTexts(body)).toEqual(['What should I wear?\nHere is my closet.', 'Be quick.']);
    expect(anthropicQuestion(body)).toBe('What should I wear?\nHere is my closet.\nBe quick.');
  });

  it('does not count tool results as user text; the question falls back to the last user text', () => {
    const toolTurn = {
      messages: [
        { role: 'user', content: 'Weather in Lyon?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'w', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'sunny' }] },
      ],
    };
    expect(anthropicTurnUserTexts(toolTurn)).toEqual([]);
    expect(anthropicQuestion(toolTurn)).toBe('Weather in Lyon?');
  });

  it('reads malformed bodies as no text', () => {
    for (const bad of [null, [], { messages: 'x' }, { messages: [null, { role: 'user', content: 5 }] }]) {
      expect(anthropicTurnUserTexts(bad)).toEqual([]);
      expect(anthropicQuestion(bad)).toBe('');
    }
  });
});
