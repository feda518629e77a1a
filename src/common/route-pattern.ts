import type { IncomingMessage } from 'node:http';

/**
 * The pattern of the route that answered a request (`/api/profiles/:id`), or null when none did. A
 * wildcard pattern is not a route of ours but the catch-all under which Nest runs module middleware
 * (the logger's), left on the request when no route matched.
 */
export function routePattern(req: IncomingMessage): string | null {
  const { route, baseUrl } = req as { route?: { path?: unknown }; baseUrl?: string };
  if (typeof route?.path !== 'string' || route.path.includes('*')) return null;
  return `${baseUrl ?? ''}${route.path}`;
}
