import { turnsWhile } from '../../test/support/event-loop';
import { loadConfig } from '../config/app-config';
import { DEFAULT_TRAIT_SCHEMAS } from '../traits/default-trait-schemas';
import { ExtractionService } from './extraction.service';
import { MAX_HEURISTIC_TEXT_CHARS } from './heuristic-extractor';

describe('ExtractionService with the heuristic rules', () => {
  const service = new ExtractionService(
    loadConfig({ EXTRACTOR: 'heuristic' }),
    undefined as never,
    undefined as never,
    undefined as never,
  );
  /** Sentences the rules read and find nothing in, past what they read. */
  const nothingToLearn = 'The weather was mild and the streets were quiet. '.repeat(
    Math.ceil((2 * MAX_HEURISTIC_TEXT_CHARS) / 50),
  );

  it('decides whether a long message has something to learn without holding the event loop', async () => {
    const { value, turns } = await turnsWhile(service.mayLearnFrom(nothingToLearn, DEFAULT_TRAIT_SCHEMAS));
    expect(value).toBe(false);
    expect(turns).toBeGreaterThan(1);
    await expect(
      service.mayLearnFrom(`${nothingToLearn} I have two kids.`, DEFAULT_TRAIT_SCHEMAS),
    ).resolves.toBe(false);
    await expect(
      service.mayLearnFrom(`I have two kids. ${nothingToLearn}`, DEFAULT_TRAIT_SCHEMAS),
    ).resolves.toBe(true);
  });

  it("reads a conversation's long messages without holding the event loop", async () => {
    const messages = [`My name is Anna. ${nothingToLearn}`, `I have two kids. ${nothingToLearn}`];
    const { value, turns } = await turnsWhile(
      service.extractConversationWithRules(messages, DEFAULT_TRAIT_SCHEMAS),
    );
    expect(value.traits).toEqual([expect.objectContaining({ key: 'name', value: 'Anna' })]);
    expect(value.memories).toEqual([
      expect.objectContaining({ content: 'User has two kids.', sources: [1] }),
    ]);
    expect(turns).toBeGreaterThan(2);
  });
});
