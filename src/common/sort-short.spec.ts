import { sortShort } from './sort-short';

describe('sortShort', () => {
  it('orders as Array.prototype.sort does, keeping equal items in their order, short or long', () => {
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 500; round++) {
      const length = Math.floor(next() * 70);
      const items = Array.from({ length }, (_, index) => ({ key: Math.floor(next() * 6), index }));
      const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;
      const expected = [...items].sort(byKey);
      const sorted = sortShort(items, byKey);
      expect(sorted).toBe(items);
      expect(sorted).toEqual(expected);
    }
  });
});
