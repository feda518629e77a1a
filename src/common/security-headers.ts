import type { RequestHandler } from 'express';
import helmet from 'helmet';

interface HeaderChanges {
  set: Array<[name: string, value: string | string[]]>;
  removed: string[];
}

/**
 * helmet's security headers, worked out once: with its default options every helmet middleware sets or
 * removes the same headers on every response, so they are recorded at start-up from one run of helmet
 * and replayed in one pass, where helmet's chain of a dozen middleware costs a proxied chat about 2 %
 * of its CPU. Start-up fails if helmet ever needs more from a request or response than setting and
 * removing headers.
 */
export function securityHeaders(): RequestHandler {
  const { set, removed } = recordHelmet();
  return (_req, res, next) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

/** What helmet does to a response, as it does it to every response. */
function recordHelmet(): HeaderChanges {
  const changes: HeaderChanges = { set: [], removed: [] };
  const response = {
    setHeader(name: string, value: string | string[]) {
      changes.set.push([name, value]);
    },
    removeHeader(name: string) {
      changes.removed.push(name);
    },
  };
  let finished = false;
  helmet()({} as never, response as never, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error('helmet failed');
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously: its headers cannot be recorded');
  return changes;
}
