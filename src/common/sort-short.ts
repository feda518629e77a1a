/** Arrays up to this long are sorted by insertion. */
const SHORT = 32;

/**
 * Sorts `items` in place and returns them, as `Array.prototype.sort` does (stably), by insertion when
 * the array is short: V8's sort first copies the array it sorts, which costs a chat's handful of
 * question words and matches more than comparing them.
 */
export function sortShort<T>(items: T[], compare: (a: T, b: T) => number): T[] {
  if (items.length > SHORT) return items.sort(compare);
  for (let i = 1; i < items.length; i++) {
    const item = items[i];
    let at = i;
    for (; at > 0 && compare(items[at - 1], item) > 0; at--) items[at] = items[at - 1];
    items[at] = item;
  }
  return items;
}
