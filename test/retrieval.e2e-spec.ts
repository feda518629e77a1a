import { askForInjectedIds, makeMemory, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';
import { injectedSystem } from './support/clients';

/** Which memories the proxy injects for a question, and within what budget. */
describe('Relevant context', () => {
  const t = useTestApp({
    upstream: 'openai',
    env: { CONTEXT_MAX_MEMORIES: '3', CONTEXT_MAX_CHARS: '2000' },
  });

  const ask = async (userId: string, question: string) => ({
    ids: await askForInjectedIds(t, userId, question),
    context: injectedSystem(t.upstream),
  });

  it('ranks a memory with a rare word of the question above many that repeat a common name', async () => {
    const profile = await makeProfile(t, 'rare-word-user');
    for (let i = 0; i < 30; i++) {
      await makeMemory(t, profile.id, {
        content: `Caroline said Caroline likes Caroline's garden, note ${i}`,
        importance: 0.9,
      });
    }
    const dog = await makeMemory(t, profile.id, {
      content: 'Adopted a dog called Pixel last spring',
      importance: 0.3,
    });
    const { ids } = await ask('rare-word-user', "What is the name of Caroline's dog?");
    expect(ids[0]).toBe(dog.id);
  });

  it('injects at most CONTEXT_MAX_MEMORIES memories and stays within CONTEXT_MAX_CHARS', async () => {
    const profile = await makeProfile(t, 'budget-user');
    for (let i = 0; i < 10; i++)
      await makeMemory(t, profile.id, {
        content: `Hiking trip number ${i} ${'in the mountains '.repeat(20)}`,
      });
    const { ids, context } = await ask('budget-user', 'Tell me about my hiking trips');
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThanOrEqual(3);
    expect(context.length).toBeLessThanOrEqual(2000);
  });

  it('builds the same context for the same question (a stable prefix for prompt caches)', async () => {
    const profile = await makeProfile(t, 'stable-user');
    for (let i = 0; i < 6; i++)
      await makeMemory(t, profile.id, { content: `Likes tea variety ${i}`, importance: 0.5 });
    const first = await ask('stable-user', 'Which tea should I buy?');
    const second = await ask('stable-user', 'Which tea should I buy?');
    expect(second.ids).toEqual(first.ids);
    expect(second.context).toEqual(first.context);
  });

  it('finds words the question and memory share only after stemming', async () => {
    const profile = await makeProfile(t, 'stem-user');
    for (let i = 0; i < 5; i++)
      await makeMemory(t, profile.id, { content: `Unrelated fact ${i} about the weather`, importance: 0.9 });
    const painting = await makeMemory(t, profile.id, {
      content: 'Painted a sunrise over the lake',
      importance: 0.1,
    });
    const { ids } = await ask('stem-user', 'When did I paint the sunrise?');
    expect(ids[0]).toBe(painting.id);
  });

  it('finds a name or an acronym that English drops as a stop word', async () => {
    const profile = await makeProfile(t, 'stopword-name-user');
    for (let i = 0; i < 5; i++)
      await makeMemory(t, profile.id, { content: `Unrelated fact ${i} about the weather`, importance: 0.9 });
    const will = await makeMemory(t, profile.id, {
      content: 'Went fishing with Will last weekend',
      importance: 0.1,
    });
    const it = await makeMemory(t, profile.id, {
      content: 'IT replaced the laptop battery',
      importance: 0.1,
    });
    expect((await ask('stopword-name-user', 'What did I do with Will?')).ids[0]).toBe(will.id);
    expect((await ask('stopword-name-user', 'What did IT do?')).ids[0]).toBe(it.id);
    // Written in lower case, "will" and "it" stay stop words: nothing matches, importance decides.
    const lower = await ask('stopword-name-user', 'what will it do?');
    expect(lower.ids).not.toContain(will.id);
    expect(lower.ids).not.toContain(it.id);
  });

  it('prefers the exact rare word over a common word that shares its English stem', async () => {
    const profile = await makeProfile(t, 'exact-word-user');
    const organization = await makeMemory(t, profile.id, {
      content: 'Volunteers for an organization that plants trees',
    });
    // Newer, so it would win the tie if only the stem ("organ") were compared.
    await makeMemory(t, profile.id, { content: 'Donated an organ at the city hospital' });
    const { ids } = await ask('exact-word-user', 'Tell me about the organization');
    expect(ids[0]).toBe(organization.id);
  });

  it('ranks a follow-up question with the message it follows ("and her husband?")', async () => {
    const profile = await makeProfile(t, 'follow-up-user');
    const target = await makeMemory(t, profile.id, {
      content: "Anna's husband Luis is an airline pilot",
      importance: 0.2,
    });
    for (const content of ["Carla's husband works at a bank", 'My husband plays golf on Sundays'])
      await makeMemory(t, profile.id, { content, importance: 0.9 });
    const ask = async (messages: Array<{ role: string; content: string }>) => {
      const res = await t
        .api()
        .post('/v1/chat/completions')
        .set('X-Service-Id', 'follow-up-user')
        .send({ model: 'm', messages, service: { debug: true, skipExtraction: true } })
        .expect(200);
      await t.drain();
      return /memories=([^;]*)/.exec(String(res.headers['x-service-context-ids']))![1].split(',');
    };
    const followUp = [
      { role: 'user', content: 'What does my sister Anna do for a living?' },
      { role: 'assistant', content: 'She is a nurse.' },
      { role: 'user', content: 'And her husband?' },
    ];
    expect((await ask(followUp))[0]).toBe(target.id);
    // the same words as a first message rank the more important memories first
    expect((await ask([{ role: 'user', content: 'And her husband?' }]))[0]).not.toBe(target.id);
  });

  it('brings in what was said right after a strong match, with no word of the question', async () => {
    const profile = await makeProfile(t, 'neighbour-user');
    for (let i = 0; i < 5; i++)
      await makeMemory(t, profile.id, { content: `Routine note ${i} about groceries`, importance: 0.5 });
    await makeMemory(t, profile.id, { content: 'Planned the Lisbon trip with Joana', importance: 0.5 });
    const after = await makeMemory(t, profile.id, {
      content: 'We leave on the second of May',
      importance: 0.5,
    });
    for (let i = 5; i < 10; i++)
      await makeMemory(t, profile.id, { content: `Routine note ${i} about laundry`, importance: 0.5 });
    const { ids } = await ask('neighbour-user', 'When is the Lisbon trip?');
    expect(ids).toContain(after.id); // without proximity the newest laundry notes would fill the budget
  });
});
