import {
  accumulateChatCompletionStream,
  ChatCompletionStreamAccumulator,
  parseSseStream,
  SseParser,
  type SseEvent,
} from './sse';

const SAMPLE = Buffer.from(
  [
    ': keep-alive comment\r\n',
    'data: {"a":"héllo 🙂"}\r\n',
    '\r\n',
    'data: first\r\n',
    'data: second\r\n',
    '\r\n',
    'event: custom\n',
    'data: line one\n',
    'data: line two\n',
    '\n',
    'data:no-space\r',
    '\r',
    'id: 7\n',
    'data: 日本語 ✓\n',
    'retry: 100\n',
    '\n',
    'data\n',
    '\n',
    'data: [DONE]\r\n',
    '\r\n',
    'data: never terminated',
  ].join(''),
  'utf8',
);

const SAMPLE_EVENTS: SseEvent[] = [
  { data: '{"a":"héllo 🙂"}' },
  { data: 'first\nsecond' },
  { data: 'line one\nline two', event: 'custom' },
  { data: 'no-space' },
  { data: '日本語 ✓', id: '7' },
  // The last event id persists across events, as the SSE spec requires.
  { data: '', id: '7' },
  { data: '[DONE]', id: '7' },
];

function parseInPieces(bytes: Buffer, cuts: number[]): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...parser.push(bytes.subarray(start, cut)));
    start = cut;
  }
  events.push(...parser.end());
  return events;
}

/** Deterministic PRNG so failures are reproducible. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('SseParser', () => {
  it('parses the sample stream in one piece', () => {
    expect(parseInPieces(SAMPLE, [])).toEqual(SAMPLE_EVENTS);
  });

  it('gives the same events for every two-way split point, including mid-character and mid-CRLF', () => {
    for (let cut = 0; cut <= SAMPLE.length; cut++) {
      expect({ cut, events: parseInPieces(SAMPLE, [cut]) }).toEqual({ cut, events: SAMPLE_EVENTS });
    }
  });

  it('gives the same events for every three-way split', () => {
    for (let first = 0; first <= SAMPLE.length; first++) {
      for (let second = first; second <= SAMPLE.length; second++) {
        const events = parseInPieces(SAMPLE, [first, second]);
        if (JSON.stringify(events) !== JSON.stringify(SAMPLE_EVENTS)) {
          throw new Error(`mismatch for cuts ${first},${second}: ${JSON.stringify(events)}`);
        }
      }
    }
  });

  it('handles byte-at-a-time delivery', () => {
    const cuts = Array.from({ length: SAMPLE.length - 1 }, (_, i) => i + 1);
    expect(parseInPieces(SAMPLE, cuts)).toEqual(SAMPLE_EVENTS);
  });

  it('treats a CR at a chunk end followed by LF as one line ending, not a blank line', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\ndata: b\r\n\r\n')).toEqual([{ data: 'a\nb' }]);
  });

  it('discards an event that is not terminated by a blank line at end of stream', () => {
    const parser = new SseParser();
    expect(parser.push('data: complete\n\ndata: partial')).toEqual([{ data: 'complete' }]);
    expect(parser.end()).toEqual([]);
  });

  it('drops oversized lines and events but keeps parsing afterwards', () => {
    const parser = new SseParser({ maxEventChars: 16 });
    const events = [
      ...parser.push('data: ' + 'x'.repeat(10)),
      ...parser.push('x'.repeat(10) + '\n\n'),
      ...parser.push('data: ok\n\n'),
      ...parser.push('data: 0123456789\ndata: 0123456789\n\n'),
      ...parser.push('data: fine\n\n'),
    ];
    expect(events).toEqual([{ data: 'ok' }, { data: 'fine' }]);
    expect(parser.dropped).toBe(2);
  });

  it('never throws on random bytes and is independent of how the bytes are split', () => {
    const random = mulberry32(42);
    const alphabet = Buffer.from('data: event:id:\r\n\n\n:{}[]"xé🙂', 'utf8');
    for (let round = 0; round < 300; round++) {
      const length = Math.floor(random() * 200);
      const bytes = Buffer.alloc(length);
      for (let i = 0; i < length; i++) {
        bytes[i] =
          random() < 0.15 ? Math.floor(random() * 256) : alphabet[Math.floor(random() * alphabet.length)];
      }
      const whole = parseInPieces(bytes, []);
      const cuts = Array.from({ length: 5 }, () => Math.floor(random() * (length + 1))).sort((a, b) => a - b);
      expect(parseInPieces(bytes, cuts)).toEqual(whole);
    }
  });

  it('drops a byte order mark at the start of the stream only, however the bytes are split', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('data: \ufeffa\n\ndata: b\n\n'),
    ]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(parseInPieces(bytes, [cut])).toEqual([{ data: '\ufeffa' }, { data: 'b' }]);
    }
  });

  it('decodes bytes that are not UTF-8 as replacement characters, a sequence cut by the end included', () => {
    const bytes = Buffer.from([
      ...Buffer.from('data: a'),
      0xff,
      0x62,
      ...Buffer.from('\n\ndata: c'),
      0xe2,
      0x82,
    ]);
    expect(parseInPieces(bytes, [8])).toEqual([{ data: 'a\ufffdb' }]);
    const parser = new SseParser();
    parser.push(bytes);
    parser.push('\n\n');
    expect(parser.end()).toEqual([]);
  });

  it('parses an async byte stream', async () => {
    async function* source(): AsyncGenerator<Buffer> {
      for (const piece of [SAMPLE.subarray(0, 10), SAMPLE.subarray(10)]) {
        await new Promise((resolve) => setImmediate(resolve));
        yield piece;
      }
    }
    const events: SseEvent[] = [];
    for await (const event of parseSseStream(source())) events.push(event);
    expect(events).toEqual(SAMPLE_EVENTS);
  });
});

function chunk(choices: unknown[], extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices, ...extra })}\n\n`;
}

const TWO_CHOICE_STREAM = [
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  chunk([{ index: 1, delta: { role: 'assistant', content: 'Bon' }, finish_reason: null }]),
  chunk([{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]),
  'data: {"choices": [ {"index": 0, "delta": {"content": "BROKEN\n\n',
  chunk([{ index: 1, delta: { content: 'jour 🙂' }, finish_reason: null }]),
  'data: 42\n\n',
  chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: null }]),
  chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  chunk([{ index: 1, delta: {}, finish_reason: 'length' }]),
  chunk([], { usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }),
  'data: [DONE]\n\n',
].join('');

describe('ChatCompletionStreamAccumulator', () => {
  it('accumulates text per choice, skipping and counting malformed events, across arbitrary splits', () => {
    const bytes = Buffer.from(TWO_CHOICE_STREAM, 'utf8');
    for (const size of [1, 3, 7, 64, bytes.length]) {
      const accumulator = new ChatCompletionStreamAccumulator();
      for (let i = 0; i < bytes.length; i += size) accumulator.push(bytes.subarray(i, i + size));
      accumulator.end();
      const summary = accumulator.summary();
      expect(summary.contentByChoice).toEqual(
        new Map([
          [0, 'Hello'],
          [1, 'Bonjour 🙂'],
        ]),
      );
      expect(summary.finishReasonByChoice).toEqual(
        new Map([
          [0, 'stop'],
          [1, 'length'],
        ]),
      );
      expect(summary.usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
      expect(summary.malformedEvents).toBe(2);
      expect(summary.sawDone).toBe(true);
      expect(summary.id).toBe('chatcmpl-1');
      expect(accumulator.text(0)).toBe('Hello');
    }
  });

  it('reports a stream that ended without [DONE]', () => {
    const accumulator = new ChatCompletionStreamAccumulator();
    accumulator.push(chunk([{ index: 0, delta: { content: 'partial' }, finish_reason: null }]));
    accumulator.push('data: {"choices":[{"index":0,"delta":{"content":"lost"');
    accumulator.end();
    expect(accumulator.summary()).toMatchObject({ sawDone: false, malformedEvents: 0 });
    expect(accumulator.text()).toBe('partial');
  });

  it('records an in-stream error object', () => {
    const accumulator = new ChatCompletionStreamAccumulator();
    accumulator.push('data: {"error":{"message":"boom","type":"server_error"}}\n\n');
    expect(accumulator.summary().error).toEqual({ message: 'boom', type: 'server_error' });
    expect(accumulator.completedText()).toBeNull();
  });

  it("gives the first choice's text as the completed answer once a finish reason or [DONE] came", () => {
    const finished = new ChatCompletionStreamAccumulator();
    finished.push(chunk([{ index: 0, delta: { content: 'Hi' }, finish_reason: 'stop' }]));
    expect(finished.completedText()).toBe('Hi');
    const done = new ChatCompletionStreamAccumulator();
    done.push(chunk([{ index: 1, delta: { content: 'other' }, finish_reason: null }]));
    done.push('data: [DONE]\n\n');
    expect(done.completedText()).toBe('');
    const cut = new ChatCompletionStreamAccumulator();
    cut.push(chunk([{ index: 0, delta: { content: 'partial' }, finish_reason: null }]));
    expect(cut.completedText()).toBeNull();
  });

  it('counts non-chunk JSON and non-object choices as malformed without throwing', () => {
    const accumulator = new ChatCompletionStreamAccumulator();
    accumulator.push('data: {"choices": "nope"}\n\ndata: {"choices": [null, 3]}\n\ndata: null\n\n');
    expect(accumulator.summary().malformedEvents).toBe(4);
  });

  it('accumulates a stream of already-parsed events', async () => {
    const events = new SseParser().push(TWO_CHOICE_STREAM);
    const summary = await accumulateChatCompletionStream(events);
    expect(summary.contentByChoice.get(1)).toBe('Bonjour 🙂');
  });
});
