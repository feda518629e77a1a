import { heldMemoryRow } from '../../test/support/held-memory-rows';
import { HeldMemoryCandidates } from '../memories/held-memory-candidates';
import { HELD_TRUST_JITTER, HeldContext, HeldContexts, heldTrustUntil } from './held-contexts';

function whole(profileId: string, contentLength: number): HeldContext {
  return {
    kind: 'whole',
    profileId,
    fingerprint: `f-${profileId}`,
    summary: '',
    traits: [],
    memories: HeldMemoryCandidates.from([heldMemoryRow(`m-${profileId}`, 'x'.repeat(contentLength))])!,
    serverStarted: '2026-01-01 00:00:00+00',
    confirmed: null,
    trustedUntil: 0,
  };
}

describe('HeldContexts', () => {
  // an entry of 2,000 characters (content and its one word) counts about 8,800 bytes: two fit in 20,000
  it('lets the least recently used entries go once the budget is passed', () => {
    const held = new HeldContexts(20_000);
    held.set('a', whole('a', 2_000), held.moment());
    held.set('b', whole('b', 2_000), held.moment());
    held.get('a'); // used: b is now the oldest
    held.set('c', whole('c', 2_000), held.moment());
    expect(held.get('b')).toBeUndefined();
    expect(held.get('a')?.profileId).toBe('a');
    expect(held.get('c')?.profileId).toBe('c');
  });

  it('keeps nothing larger than the whole budget, and nothing at all with a budget of 0', () => {
    const small = new HeldContexts(1_000);
    small.set('a', whole('a', 10_000), small.moment());
    expect(small.size).toBe(0);
    const none = new HeldContexts(0);
    none.set('large', { kind: 'large', profileId: 'p' }, none.moment());
    expect(none.size).toBe(0);
  });

  it('counts an entry once when it is replaced', () => {
    const held = new HeldContexts(20_000);
    for (let i = 0; i < 10; i++) held.set('a', whole('a', 2_000), held.moment());
    held.set('b', whole('b', 2_000), held.moment());
    expect(held.get('a')).toBeDefined();
    expect(held.get('b')).toBeDefined();
  });

  it('forgets every entry of an erased profile, and only those', () => {
    const held = new HeldContexts(1_000_000);
    held.set('user:u', whole('p1', 10), held.moment());
    held.set('id:p1', whole('p1', 10), held.moment());
    held.set('user:u:50', { kind: 'large', profileId: 'p1' }, held.moment());
    held.set('user:v', whole('p2', 10), held.moment());
    held.forgetProfile('p1');
    expect(held.size).toBe(1);
    expect(held.get('user:v')?.profileId).toBe('p2');
  });

  it('holds nothing of a profile erased after the read it came from began', () => {
    const held = new HeldContexts(1_000_000);
    const readSince = held.moment();
    held.forgetProfile('p1');
    held.set('user:u', whole('p1', 10), readSince);
    held.set('user:u:50', { kind: 'large', profileId: 'p1' }, readSince);
    held.set('user:v', whole('p2', 10), readSince);
    expect(held.get('user:u')).toBeUndefined();
    expect(held.get('user:u:50')).toBeUndefined();
    expect(held.get('user:v')?.profileId).toBe('p2');
    // a read that began after the erasure saw the database without the profile: what it holds is new
    held.set('user:u', whole('p1', 10), held.moment());
    expect(held.get('user:u')?.profileId).toBe('p1');
  });

  it('holds nothing from a read older than the erasures it still remembers', () => {
    const held = new HeldContexts(1_000_000);
    const readSince = held.moment();
    for (let i = 0; i <= 10_000; i++) held.forgetProfile(`erased-${i}`);
    held.set('user:v', whole('p2', 10), readSince);
    expect(held.get('user:v')).toBeUndefined();
    held.set('user:v', whole('p2', 10), held.moment());
    expect(held.get('user:v')?.profileId).toBe('p2');
  });
});

describe('heldTrustUntil', () => {
  it('trusts a copy for between 75 % and all of the trust time, spread at random', () => {
    expect(heldTrustUntil(1_000, 5_000, 0)).toBe(6_000);
    expect(heldTrustUntil(1_000, 5_000, 0.999_999)).toBeCloseTo(1_000 + 5_000 * (1 - HELD_TRUST_JITTER), 1);
    const ends = Array.from({ length: 200 }, () => heldTrustUntil(0, 5_000));
    expect(Math.min(...ends)).toBeGreaterThanOrEqual(3_750);
    expect(Math.max(...ends)).toBeLessThanOrEqual(5_000);
    expect(new Set(ends).size).toBeGreaterThan(150);
    expect(heldTrustUntil(1_000, 0)).toBe(1_000);
  });
});
