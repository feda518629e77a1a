import { HeldMemoryCandidates, HeldMemoryRow, IncompleteHeldCopy } from './held-memory-candidates';

function row(id: string, version: string, content: string): HeldMemoryRow {
  return {
    id,
    version,
    content,
    type: 'fact',
    importance: 0.5,
    decay_factor: 1,
    created_at: '2026-01-01T00:00:00.000000+00:00',
    last_accessed_at: null,
    created_us: '1767225600000000',
    superseded: false,
    lexemes: content.toLowerCase().split(' '),
  };
}

const contents = (held: HeldMemoryCandidates) =>
  held
    .candidates([], 10)
    .map((memory) => memory.content)
    .sort();

describe('HeldMemoryCandidates.updated', () => {
  const held = HeldMemoryCandidates.from([row('a', '1', 'likes tea'), row('b', '1', 'lives in Oslo')])!;

  it('keeps the memories held at the versions named, takes the rows sent, and drops the rest', () => {
    const updated = held.updated(
      [row('b', '2', 'lives in Bergen'), row('c', '1', 'plays chess')],
      'b=2,c=1',
    )!;
    expect(contents(updated)).toEqual(['lives in Bergen', 'plays chess']);
    expect([...updated.versions].sort()).toEqual(['b=2', 'c=1']);
    expect(contents(held.updated([], 'a=1')!)).toEqual(['likes tea']);
    expect(held.updated([], '')!.count).toBe(0);
  });

  it('refuses a memory named at a version that was neither sent nor held', () => {
    expect(() => held.updated([], 'a=1,b=2')).toThrow(IncompleteHeldCopy);
  });
});
