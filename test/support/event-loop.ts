/**
 * Counts the turns of the event loop until `work` settles (none when it runs in one task), and the
 * longest time between two of them: how long the work held the loop at a time.
 */
export async function turnsWhile<T>(
  work: Promise<T>,
): Promise<{ value: T; turns: number; longestMs: number }> {
  let turns = 0;
  let longestMs = 0;
  let last = performance.now();
  let done = false;
  const tick = () => {
    if (done) return;
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work;
  done = true;
  longestMs = Math.max(longestMs, performance.now() - last);
  return { value, turns, longestMs };
}
