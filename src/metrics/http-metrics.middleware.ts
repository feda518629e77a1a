import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { routePattern } from '../common/route-pattern';
import { MetricsService } from './metrics.service';

/** Label of requests that matched no route (404s, and requests refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts and times every request when its response closes (which it does whether it was sent whole or
 * not), labelled by the route pattern (`/api/profiles/:id`, never the raw URL, so ids do not multiply
 * the series).
 */
export function httpMetricsMiddleware(metrics: MetricsService): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    res.on('close', () => {
      const seconds = (performance.now() - started) / 1000;
      metrics.observeHttpRequest(req.method, routePattern(req) ?? UNMATCHED_ROUTE, res.statusCode, seconds);
    });
    next();
  };
}
