import {
  FAKE_CREATED,
  FakeOpenAI,
  FakeOpenAIScript,
  RecordedRequest,
  sendJson,
  startRecordingServer,
} from './fake-openai-upstream';

/** A non-streaming chat completion whose message content is `content`, as the fake should answer it. */
export function llmAnswer(content: string): FakeOpenAIScript {
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-llm',
      object: 'chat.completion',
      created: FAKE_CREATED,
      model: 'fake-model',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    },
  };
}

/** The answer of an extraction call: `{ traits, memories }` as JSON text. */
export function extractionAnswer(
  traits: Array<{ key: string; value: unknown; confidence?: number }>,
  memories: Array<{ content: string; type?: string; importance?: number }> = [],
): FakeOpenAIScript {
  return llmAnswer(JSON.stringify({ traits, memories }));
}

/** The requests of extraction calls (they carry the extraction instructions), in order. */
export function extractionRequests(llm: FakeOpenAI): RecordedRequest[] {
  return llm.requests.filter((request) => isExtractionRequest(request));
}

export function isExtractionRequest(request: RecordedRequest): boolean {
  const system: unknown = request.body?.messages?.[0]?.content;
  return typeof system === 'string' && system.startsWith('You extract what a text reveals');
}

/** The text an extraction call analysed (between the data tags): its messages, a blank line between. */
export function analysedText(request: RecordedRequest): string {
  return analysedMessages(request).join('\n\n');
}

/** The numbered messages an extraction call analysed, in order. */
export function analysedMessages(request: RecordedRequest): string[] {
  const user = String(request.body?.messages?.[1]?.content ?? '');
  const text = /<user_text>\n([\s\S]*)\n<\/user_text>/.exec(user)?.[1] ?? '';
  return [...text.matchAll(/<user_message n="\d+">\n([\s\S]*?)\n<\/user_message>/g)].map((match) => match[1]);
}

/** Resolves when `condition` holds, polling; for processes whose work cannot be awaited directly. */
export async function eventually<T>(
  probe: () => Promise<T>,
  condition: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (condition(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * An extraction LLM that answers every chat completion after `delayMs` with `answer(n)` (n counts the
 * requests from 1): for tests where many calls overlap in time.
 */
export async function startSlowLlm(
  delayMs: number,
  answer: (requestNumber: number) => { traits?: unknown[]; memories?: unknown[] },
): Promise<{ url: string; requests: RecordedRequest[]; close: () => Promise<void> }> {
  let count = 0;
  const server = await startRecordingServer((exchange) => {
    const number = ++count;
    exchange.later(delayMs, () => {
      const script = llmAnswer(JSON.stringify({ traits: [], memories: [], ...answer(number) }));
      if (script.kind === 'json') sendJson(exchange.res, 200, script.body);
    });
  });
  return { url: `${server.origin}/v1`, requests: server.requests, close: server.close };
}
