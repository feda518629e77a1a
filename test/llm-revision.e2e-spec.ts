import { listMemories, makeProfileWith } from './support/factories';
import { LooseJson } from './support/fake-openai-upstream';
import { analysedText, llmAnswer } from './support/fake-llm';
import { useTestApp } from './support/test-app';
import { chatTurn } from './support/clients';

/** The LLM extractor sees the related stored memories with their ids, and may supersede or reinforce them. */
describe('memory revision by the LLM extractor', () => {
  const t = useTestApp({
    upstream: 'openai',
    extractor: 'llm',
    env: { EXTRACTION_LLM_ATTEMPTS: '1', EXTRACTION_SWEEP_INTERVAL_MS: '0' },
  });

  const profileWith = (contents: string[]) =>
    makeProfileWith(t, {
      summary: 'By hand.',
      memories: contents.map((content) => ({ content, importance: 0.4 })),
    });

  async function chatAndLearn(userId: string, content: string, memories: LooseJson[]) {
    t.llm.script(llmAnswer(JSON.stringify({ traits: [], memories })));
    await chatTurn(t, userId, content);
  }

  const all = (profileId: string) => listMemories(t, profileId, '?include=superseded');

  it('shows the related memories with their ids, and supersedes the one the LLM names', async () => {
    const { profile, memories } = await profileWith(['The user lives in Lisbon.', 'The user has a cat.']);
    const [lisbon] = memories;
    await chatAndLearn(profile.externalId!, 'I moved to Berlin last week.', [
      {
        content: 'The user lives in Berlin.',
        type: 'fact',
        importance: 0.8,
        action: 'supersede',
        memoryId: lisbon.id,
      },
    ]);
    const prompt = t.llm.requests[0].body.messages[1].content as string;
    expect(prompt).toContain(`${lisbon.id}: The user lives in Lisbon.`);
    expect(analysedText(t.llm.requests[0])).toBe('I moved to Berlin last week.');

    const stored = await all(profile.id);
    const berlin = stored.find((memory) => memory.content === 'The user lives in Berlin.');
    expect(stored.find((memory) => memory.id === lisbon.id)).toEqual(
      expect.objectContaining({ supersededBy: berlin.id, supersededAt: expect.any(String) }),
    );
    const history = (
      await t.api().get(`/api/profiles/${profile.id}/memories/${lisbon.id}/history`).expect(200)
    ).body.history as LooseJson[];
    expect(history.map((entry) => [entry.change, entry.source])).toEqual([
      ['superseded', 'extraction'],
      ['created', 'api'],
    ]);
  });

  it('reinforces the memory the LLM says was said again, without adding one', async () => {
    const { profile, memories } = await profileWith(['The user has a cat.']);
    const [cat] = memories;
    await chatAndLearn(profile.externalId!, 'As I said, I have a cat.', [
      {
        content: 'The user owns a cat.',
        type: 'fact',
        importance: 0.7,
        action: 'reinforce',
        memoryId: cat.id,
      },
    ]);
    const stored = await all(profile.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toEqual(expect.objectContaining({ id: cat.id, importance: 0.7 }));
    const history = (await t.api().get(`/api/profiles/${profile.id}/memories/${cat.id}/history`).expect(200))
      .body.history as LooseJson[];
    expect(history[0]).toEqual(
      expect.objectContaining({
        change: 'reinforced',
        source: 'extraction',
        oldValue: expect.objectContaining({ importance: 0.4 }),
      }),
    );
  });

  it('ignores ids it invents or that belong to another profile: the memory is added, nothing else changes', async () => {
    const other = await profileWith(['The other user lives in Rome.']);
    const { profile } = await profileWith(['The user likes tea.']);
    await chatAndLearn(profile.externalId!, 'I moved to Paris.', [
      {
        content: 'The user lives in Paris.',
        type: 'fact',
        importance: 0.8,
        action: 'supersede',
        memoryId: other.memories[0].id,
      },
      {
        content: 'The user likes coffee.',
        type: 'preference',
        importance: 0.5,
        action: 'reinforce',
        memoryId: '00000000-0000-4000-8000-000000000000',
      },
      {
        content: 'The user walks to work.',
        type: 'fact',
        importance: 0.5,
        action: 'supersede',
        memoryId: 'not-an-id',
      },
    ]);
    expect((await all(profile.id)).map((memory) => [memory.content, memory.supersededBy]).sort()).toEqual([
      ['The user likes coffee.', null],
      ['The user likes tea.', null],
      ['The user lives in Paris.', null],
      ['The user walks to work.', null],
    ]);
    expect(await all(other.profile.id)).toEqual([expect.objectContaining({ supersededBy: null })]);
    const otherHistory = (
      await t
        .api()
        .get(`/api/profiles/${other.profile.id}/memories/${other.memories[0].id}/history`)
        .expect(200)
    ).body.history as LooseJson[];
    expect(otherHistory.map((entry) => entry.change)).toEqual(['created']);
  });
});
