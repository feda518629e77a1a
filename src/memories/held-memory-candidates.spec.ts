import { heldMemoryRow } from '../../test/support/held-memory-rows';
import { HeldMemoryCandidates, IncompleteHeldCopy } from './held-memory-candidates';

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

  it('refuses a memory named at a version that was neither sent nor held', () => {
    expect(() => held.updated([], 'a=1,b=2')).toThrow(IncompleteHeldCopy);
  });
});
