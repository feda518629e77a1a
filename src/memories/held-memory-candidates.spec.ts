import { heldMemoryRow } from '../../test/support/held-memory-rows';
import { HeldMemoryCandidates, IncompleteHeldCopy } from './held-memory-candidates';
import { LINK_SHARE } from './memory-candidates';
import { rankMemories } from './memory-ranking';

const contents = (held: HeldMemoryCandidates) =>
  held
    .candidates([], 10)
    .map((memory) => memory.content)
    .sort();

describe('HeldMemoryCandidates.updated', () => {
  const held = HeldMemoryCandidates.from([
    heldMemoryRow('a', 'likes tea', '1'),
    heldMemoryRow('b', 'lives in Oslo', '1'),
  ])!;

  it('keeps the memories held at the versions named, takes the rows sent, and drops the rest', () => {
    const updated = held.updated(
      [heldMemoryRow('b', 'lives in Bergen', '2'), heldMemoryRow('c', 'plays chess', '1')],
      'b=2,c=1',
    )!;
    expect(contents(updated)).toEqual(['lives in Bergen', 'plays chess']);
    expect([...updated.versions].sort()).toEqual(['b=2', 'c=1']);
    expect(contents(held.updated([], 'a=1')!)).toEqual(['likes tea']);
    expect(held.updated([], '')!.count).toBe(0);
  });

  it('takes a touch in place: a new version and last-accessed time, nothing else changed', () => {
    const copy = HeldMemoryCandidates.from([
      heldMemoryRow('a', 'likes tea'),
      heldMemoryRow('b', 'lives in Oslo'),
    ])!;
    const touchedAt = '2026-02-01T10:00:00.000000+00:00';
    const touched = { ...heldMemoryRow('b', 'lives in Oslo', '7'), last_accessed_at: touchedAt };
    const updated = copy.updated([touched], 'a=1,b=7')!;
    expect(updated).toBe(copy);
    expect([...updated.versions].sort()).toEqual(['a=1', 'b=7']);
    const byContent = new Map(updated.candidates([], 10).map((memory) => [memory.content, memory]));
    expect(byContent.get('lives in Oslo')!.lastAccessedAt).toEqual(new Date(touchedAt));
    expect(byContent.get('likes tea')!.lastAccessedAt).toBeNull();
  });

  it('builds a new copy when a row sent changed more than its access, or the memories differ', () => {
    const copy = () =>
      HeldMemoryCandidates.from([heldMemoryRow('a', 'likes tea'), heldMemoryRow('b', 'lives in Oslo')])!;
    const edited = copy();
    const moved = edited.updated([heldMemoryRow('b', 'lives in Bergen', '2')], 'a=1,b=2')!;
    expect(moved).not.toBe(edited);
    expect(contents(moved)).toEqual(['likes tea', 'lives in Bergen']);
    expect(contents(edited)).toEqual(['likes tea', 'lives in Oslo']);
    const important = copy();
    const weighed = { ...heldMemoryRow('b', 'lives in Oslo', '2'), importance: 0.9 };
    expect(important.updated([weighed], 'a=1,b=2')).not.toBe(important);
    const fewer = copy();
    const touched = {
      ...heldMemoryRow('b', 'lives in Oslo', '2'),
      last_accessed_at: '2026-02-01T10:00:00+00:00',
    };
    const dropped = fewer.updated([touched], 'b=2')!;
    expect(dropped).not.toBe(fewer);
    expect(contents(dropped)).toEqual(['lives in Oslo']);
  });

  it('refuses a memory named at a version that was neither sent nor held', () => {
    expect(() => held.updated([], 'a=1,b=2')).toThrow(IncompleteHeldCopy);
  });
});

/** A memory said `day` days into 2026: days apart, no memory is another's neighbour in time. */
function onDay(id: string, content: string, day: number) {
  const at = Date.UTC(2026, 0, 1) + day * 86_400_000;
  return {
    ...heldMemoryRow(id, content),
    created_at: new Date(at).toISOString(),
    created_us: String(at * 1000),
  };
}

describe('HeldMemoryCandidates linked memories', () => {
  const question = [
    { unit: 'maria', exact: 'maria', stem: 'maria' },
    { unit: 'adopted', exact: 'adopted', stem: 'adopted' },
  ];
  const fillers = Array.from({ length: 6 }, (_, i) =>
    onDay(`f${i}`, `jon went shopping on day ${i}`, 40 + i),
  );
  const held = HeldMemoryCandidates.from([
    onDay('a', 'maria adopted a greyhound called biscotti', 10),
    // shares no word with the question, only the rare "biscotti" with its best match
    onDay('b', 'biscotti chewed the sofa', 1),
    // shares only "a" and "called" with it, which most memories have
    onDay('c', 'a friend called about the sofa', 2),
    ...fillers.map((row) => ({
      ...row,
      content: `${row.content} a called`,
      lexemes: [...row.lexemes, 'a', 'called'],
    })),
  ])!;

  it('brings a memory sharing a rare word with a strongest match, with a share of its rank, anchored to it', () => {
    const candidates = held.candidates(question, 2);
    const anchor = candidates.find((memory) => memory.id === 'a')!;
    const linked = candidates.find((memory) => memory.id === 'b')!;
    expect(linked.textRank).toBeCloseTo(anchor.textRank * LINK_SHARE, 9);
    expect(linked.anchorId).toBe('a');
    // a word that more than LINK_WORD_MEMORIES memories have links nothing
    expect(candidates.map((memory) => memory.id)).not.toContain('c');
    // without the link it would not be a candidate: the two newest memories stand whatever the question
    expect(candidates.map((memory) => memory.id).sort()).toEqual(['a', 'b', 'f4', 'f5']);
    const ranked = rankMemories(
      candidates,
      new Date('2026-03-01T00:00:00Z'),
      undefined,
      'What did Maria adopt?',
    );
    expect(ranked.map((memory) => memory.id).slice(0, 2)).toEqual(['a', 'b']);
  });
});

describe('HeldMemoryCandidates word rarity', () => {
  it('weighs words by their rarity in the profile: two in most of its memories weigh less than one in two', () => {
    const held = HeldMemoryCandidates.from([
      onDay('common', 'anna likes tea', 1),
      onDay('rare', 'the kettle broke', 2),
      onDay('rare-too', 'kettle is new', 3),
      ...Array.from({ length: 4 }, (_, i) => onDay(`f${i}`, `anna drinks tea on day ${i}`, 10 + i)),
    ])!;
    const question = ['anna', 'tea', 'kettle'].map((word) => ({ unit: word, exact: word, stem: word }));
    const byRank = held
      .candidates(question, 10)
      .sort((a, b) => b.textRank - a.textRank || a.id.localeCompare(b.id))
      .map((memory) => memory.id);
    // against a corpus of 10,000 memories, "anna" and "tea" (in 5 of these 7) weighed almost as much as "kettle"
    expect(byRank.slice(0, 3)).toEqual(['rare', 'rare-too', 'common']);
  });
});
