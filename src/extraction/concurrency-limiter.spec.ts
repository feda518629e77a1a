import { ConcurrencyLimiter } from './concurrency-limiter';

describe('ConcurrencyLimiter', () => {
  it('never runs more than the limit at once, in arrival order, also when tasks fail', async () => {
    const limiter = new ConcurrencyLimiter(2);
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const task = (index: number) => async () => {
      started.push(index);
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 5));
      active--;
      if (index % 3 === 0) throw new Error(`task ${index}`);
      return index;
    };
    const results = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => limiter.run(task(i))));
    expect(peak).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(3);
  });
});
