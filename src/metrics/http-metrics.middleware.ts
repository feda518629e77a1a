import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { routePattern } from '../common/route-pattern';
import { MetricsService } from './metrics.service';

/** Label of requests that matched no route (404s, and requests refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts and times every request when its response ends, labelled by the route pattern
 * (`/api/profiles/:id`, never the raw URL, so ids do not multiply the series). Proxied chat requests
 * also report the context the proxy injected, which it announces in `x-service-context`.
 */
export function httpMetricsMiddleware(metrics: MetricsService): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      const seconds = (performance.now() - started) / 1000;
      metrics.observeHttpRequest(req.method, routePattern(req) ?? UNMATCHED_ROUTE, res.statusCode, seconds);
      const context = parseInjectedContext(res.getHeader('x-service-context'));
      if (context) metrics.observeInjectedContext(context.traits, context.memories);
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}

/** `traits=2; memories=5` into numbers; null when the header is absent or not in that form. */
export function parseInjectedContext(header: unknown): { traits: number; memories: number } | null {
  if (typeof header !== 'string') return null;
  const match = /^traits=(\d+);\s*memories=(\d+)$/.exec(header.trim());
  return match ? { traits: Number(match[1]), memories: Number(match[2]) } : null;
}
