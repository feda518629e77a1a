import { randomUUID } from 'node:crypto';
import { TEXT_SLICE } from '../src/common/text-slices';
import { ExtractionQueue, MAX_LEARNT_MESSAGE_CHARS } from '../src/extraction/extraction-queue';
import { storedMessageText } from '../src/messages/turn-recorder';
import { insertMessages, makeProfile } from './support/factories';
import { llmAnswer } from './support/fake-llm';
import { useTestApp } from './support/test-app';

/**
 * A chat whose user message is megabytes long: it is handled in slices (so other requests are answered
 * meanwhile), yet relayed and stored whole, and learning reads its first MAX_LEARNT_MESSAGE_CHARS.
 */
describe('a chat with a very large user message', () => {
  const t = useTestApp({ upstream: 'openai', env: { EXTRACTION_SWEEP_INTERVAL_MS: '0' } });

  /** Prose of `length` characters with quotes, escapes, accents and surrogate pairs throughout. */
  function filler(length: number): string {
    const sentence = 'The "notes" go on\\ and on, café, 😀, without saying much.\n';
    return sentence.repeat(Math.ceil(length / sentence.length)).slice(0, length);
  }

  it('relays the message as JSON.stringify would, stores it whole and learns from its start', async () => {
    const userId = `large-${randomUUID()}`;
    // past the learnt part: a statement the rules would read, were it in it
    const content = `My name is Anna. ${filler(MAX_LEARNT_MESSAGE_CHARS)} I live in Lisbon. ${filler(
      12 * TEXT_SLICE,
    )} \ud800 end`;
    t.upstream.script(llmAnswer('Noted.'));
    await t
      .api()
      .post('/v1/chat/completions')
      .set('X-Service-Id', userId)
      .send({ model: 'fake-model', messages: [{ role: 'user', content }] })
      .expect(200);

    const [relayed] = t.upstream.requests;
    expect(relayed.rawBody).toBe(JSON.stringify(relayed.body));
    expect(relayed.body.messages.at(-1)).toEqual({ role: 'user', content });

    await t.drain();
    const stored: Array<{ content: string }> = await t.dataSource.query(
      `SELECT m.content FROM messages m JOIN profiles p ON p.id = m.profile_id
       WHERE p.external_id = $1 AND m.role = 'user'`,
      [userId],
    );
    expect(stored).toHaveLength(1);
    expect(stored[0].content === storedMessageText(content)).toBe(true);

    const traits: Array<{ key: string; value: unknown }> = await t.dataSource.query(
      `SELECT t.key, t.value FROM traits t JOIN profiles p ON p.id = t.profile_id WHERE p.external_id = $1`,
      [userId],
    );
    expect(traits).toContainEqual({ key: 'name', value: 'Anna' });
    expect(JSON.stringify(traits)).not.toContain('Lisbon');
  });

  it('reads at most MAX_LEARNT_MESSAGE_CHARS of each message from the database to learn from it', async () => {
    const profile = await makeProfile(t, `pasted-${randomUUID()}`);
    const long = `I love hiking. ${'é😀 and more words. '.repeat(200_000)}`;
    await insertMessages(t, profile.id, [long, 'An answer.']);

    const batch = await t.app.get(ExtractionQueue).claimNextBatch(profile.id, 60_000);

    expect(batch!.userMessages).toHaveLength(1);
    const read = batch!.userMessages[0].content;
    // characters as the database counts them (code points): the start of the message, no more
    expect([...read]).toHaveLength(MAX_LEARNT_MESSAGE_CHARS);
    expect(long.startsWith(read)).toBe(true);
  });
});
