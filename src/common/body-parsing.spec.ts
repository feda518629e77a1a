import { jsonDepthExceeds } from './body-parsing';

describe('jsonDepthExceeds', () => {
  const nested = (depth: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
    return value;
  };

  it('counts objects and arrays, not scalars', () => {
    expect(jsonDepthExceeds({ a: 1, b: 'x' }, 1)).toBe(false);
    expect(jsonDepthExceeds({ a: { b: 1 } }, 1)).toBe(true);
    expect(jsonDepthExceeds(nested(64), 64)).toBe(false);
    expect(jsonDepthExceeds(nested(65), 64)).toBe(true);
  });

  it('walks hostile nesting without recursion', () => {
    expect(jsonDepthExceeds(nested(200_000), 64)).toBe(true);
  });

  it('looks into every branch', () => {
    expect(jsonDepthExceeds({ shallow: 1, list: [1, 2, { deep: nested(70) }] }, 64)).toBe(true);
  });
});
