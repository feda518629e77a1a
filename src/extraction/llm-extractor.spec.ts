import { Logger } from '@nestjs/common';
import { DEFAULT_TRAIT_SCHEMAS } from '../traits/default-trait-schemas';
import { ExtractionAbortedError, ExtractionFailedError } from './extraction-errors';
import { LlmChat, LlmChatRequest, LlmOutcome } from './llm-chat';
import { LlmExtractor } from './llm-extractor';

const GOOD = JSON.stringify({
  traits: [{ key: 'name', value: 'Anna', confidence: 0.9 }],
  memories: [{ content: 'The user has two kids.', type: 'fact', importance: 0.8 }],
});
const answer = (content: string | null): LlmOutcome => ({ kind: 'answer', content, refusal: null });

function scripted(...outcomes: LlmOutcome[]) {
  const requests: LlmChatRequest[] = [];
  const chat = {
    complete: (request: LlmChatRequest) => {
      requests.push(request);
      const next = outcomes.shift();
      if (!next) throw new Error('no scripted outcome left');
      return Promise.resolve(next);
    },
  } as unknown as LlmChat;
  const formats = () =>
    requests.map((r) => (r.response_format as { type?: string } | undefined)?.type ?? 'prompt_only');
  return { chat, requests, formats };
}

const signal = () => new AbortController().signal;

describe('LlmExtractor', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('asks for json_schema and returns the validated items', async () => {
    const { chat, formats } = scripted(answer(GOOD));
    const result = await new LlmExtractor(chat, { attempts: 3, retryBaseMs: 0 }).extract(
      'x',
      DEFAULT_TRAIT_SCHEMAS,
      signal(),
    );
    expect(result.traits).toEqual([{ key: 'name', value: 'Anna', confidence: 0.9 }]);
    expect(result.memories).toHaveLength(1);
    expect(formats()).toEqual(['json_schema']);
  });

  it('steps down to json_object, then to instructions only, when the provider rejects the format, and remembers it', async () => {
    const rejected: LlmOutcome = {
      kind: 'rejected',
      status: 400,
      detail: "HTTP 400: 'response_format' is not supported",
    };
    const { chat, formats } = scripted(rejected, rejected, answer(GOOD), answer(GOOD));
    const extractor = new LlmExtractor(chat, { attempts: 1, retryBaseMs: 0 });
    await extractor.extract('x', DEFAULT_TRAIT_SCHEMAS, signal());
    await extractor.extract('y', DEFAULT_TRAIT_SCHEMAS, signal());
    expect(formats()).toEqual(['json_schema', 'json_object', 'prompt_only', 'prompt_only']);
  });

  it('fails for good when even the plain request is rejected, or the call is refused (401)', async () => {
    const rejected: LlmOutcome = { kind: 'rejected', status: 400, detail: 'HTTP 400: bad model' };
    const first = scripted(rejected, rejected, rejected);
    await expect(
      new LlmExtractor(first.chat, { attempts: 3, retryBaseMs: 0 }).extract(
        'x',
        DEFAULT_TRAIT_SCHEMAS,
        signal(),
      ),
    ).rejects.toMatchObject({ transient: false });
    const second = scripted({ kind: 'failed', reason: 'HTTP 401' });
    await expect(
      new LlmExtractor(second.chat, { attempts: 3, retryBaseMs: 0 }).extract(
        'x',
        DEFAULT_TRAIT_SCHEMAS,
        signal(),
      ),
    ).rejects.toBeInstanceOf(ExtractionFailedError);
  });

  it('retries transient failures and unusable answers, then gives up after the attempts', async () => {
    const ok = scripted({ kind: 'transient', reason: 'HTTP 503' }, answer('not json at all'), answer(GOOD));
    const result = await new LlmExtractor(ok.chat, { attempts: 3, retryBaseMs: 1 }).extract(
      'x',
      DEFAULT_TRAIT_SCHEMAS,
      signal(),
    );
    expect(result.traits).toHaveLength(1);
    expect(ok.requests).toHaveLength(3);

    const bad = scripted(answer('garbage'), answer('{"nope": 1'), answer('still garbage'));
    await expect(
      new LlmExtractor(bad.chat, { attempts: 3, retryBaseMs: 1 }).extract(
        'x',
        DEFAULT_TRAIT_SCHEMAS,
        signal(),
      ),
    ).rejects.toMatchObject({ transient: true, message: expect.stringContaining('3 time(s)') });
  });

  it('takes a refusal (no content) as an empty result without retrying', async () => {
    const { chat, requests } = scripted({ kind: 'answer', content: null, refusal: 'I cannot help' });
    const result = await new LlmExtractor(chat, { attempts: 3, retryBaseMs: 0 }).extract(
      'x',
      DEFAULT_TRAIT_SCHEMAS,
      signal(),
    );
    expect(result).toEqual({ traits: [], memories: [] });
    expect(requests).toHaveLength(1);
  });

  it('stops waiting for a retry when aborted', async () => {
    const controller = new AbortController();
    const { chat } = scripted({ kind: 'transient', reason: 'HTTP 503' });
    const pending = new LlmExtractor(chat, { attempts: 3, retryBaseMs: 60_000 }).extract(
      'x',
      DEFAULT_TRAIT_SCHEMAS,
      controller.signal,
    );
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toBeInstanceOf(ExtractionAbortedError);
  });
});
