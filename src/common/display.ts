import { isAbsolute, relative } from 'node:path';

/** Time since `startedAt` (ms since the epoch), for log lines: "4.2 s". */
export function elapsedSeconds(startedAt: number): string {
  return `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
}

/** A path as the operator would write it: relative to the working directory when inside it. */
export function displayPath(path: string, cwd = process.cwd()): string {
  const inside = relative(cwd, path);
  if (inside === '') return '.';
  return inside.startsWith('..') || isAbsolute(inside) ? path : `./${inside}`;
}
