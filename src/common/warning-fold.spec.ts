import { WarningFold } from './warning-fold';

describe('WarningFold', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('admits the first warning of each cause per interval, and counts the rest into one line', () => {
    const summaries: string[] = [];
    const fold = new WarningFold(10_000, (cause, count) => summaries.push(`${cause} x${count}`));
    const admitted = ['a', 'a', 'b', 'a', 'b', 'c'].map((cause) => fold.admit(cause));
    expect(admitted).toEqual([true, false, true, false, false, true]);
    expect(summaries).toEqual([]);
    jest.advanceTimersByTime(10_000);
    expect(summaries).toEqual(['a x2', 'b x1']); // c came once: nothing to add
    // a new interval: the first of a cause is written again
    expect(fold.admit('a')).toBe(true);
    jest.advanceTimersByTime(10_000);
    expect(summaries).toEqual(['a x2', 'b x1']);
  });
});
