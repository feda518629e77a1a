import { ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { RATE_LIMIT_BUCKET, RateLimitBucket } from '../common/rate-limit.decorator';
import { requestLogger } from '../common/request-logger';

/**
 * @nestjs/throttler's guard with our rules: each route counts against exactly one bucket (its
 * decorator's, else `default`); a limit of 0 is off; the bucket of a client is one per client address
 * across all routes of the bucket (the address is `req.ip`, which honours TRUST_PROXY); the window
 * slides over one minute; a refused request gets the error envelope and `Retry-After`; every limited
 * response carries `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds).
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /**
   * Only the route's bucket is counted, so only its throttler is looked at. @nestjs/throttler's own
   * canActivate resolves the limit, window, block and hooks of every throttler on every request, each
   * awaited (17 promises of a chat's 63 with limits off); it still runs when a throttler's settings are
   * functions or a skip hook is configured, which ours never are.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const bucket = this.bucketOf(context);
    if (bucket === 'none') return true;
    const throttler = this.throttlers.find((candidate) => (candidate.name ?? 'default') === bucket);
    if (throttler === undefined) return true;
    const { limit, ttl, blockDuration } = throttler;
    if (
      typeof limit !== 'number' ||
      typeof ttl !== 'number' ||
      (blockDuration !== undefined && typeof blockDuration !== 'number') ||
      throttler.skipIf ||
      this.commonOptions.skipIf
    ) {
      return super.canActivate(context);
    }
    if (limit <= 0) return true;
    return this.handleRequest({
      context,
      limit,
      ttl,
      throttler,
      blockDuration: blockDuration ?? ttl,
      getTracker: throttler.getTracker ?? this.commonOptions.getTracker!,
      generateKey: throttler.generateKey ?? this.commonOptions.generateKey!,
    });
  }

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Promise.resolve(this.bucketOf(context) === 'none');
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, getTracker, generateKey } = request;
    const name = throttler.name ?? 'default';
    if (limit <= 0 || this.bucketOf(context) !== name) return true;
    const { req, res } = this.getRequestResponse(context) as { req: Request; res: Response };
    const tracker = await getTracker(req, context);
    const record = await this.storageService.increment(
      generateKey(context, tracker, name),
      ttl,
      limit,
      0,
      name,
    );
    res.header('X-RateLimit-Limit', String(limit));
    res.header('X-RateLimit-Remaining', String(Math.max(0, limit - record.totalHits)));
    if (!record.isBlocked) {
      res.header('X-RateLimit-Reset', String(Math.max(0, record.timeToExpire)));
      return true;
    }
    const retryAfter = Math.max(1, record.timeToBlockExpire);
    res.header('X-RateLimit-Reset', String(retryAfter));
    res.header('Retry-After', String(retryAfter));
    requestLogger(req, 'RateLimit').debug(`rate limit "${name}" (${limit}/min) exceeded by ${tracker}`);
    throw new ApiError(
      HttpStatus.TOO_MANY_REQUESTS,
      'rate_limit_exceeded',
      `Too many requests: the limit is ${limit} per minute. Retry after ${retryAfter} s.`,
    );
  }

  private bucketOf(context: ExecutionContext): RateLimitBucket {
    return (
      this.reflector.getAllAndOverride<RateLimitBucket | undefined>(RATE_LIMIT_BUCKET, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'default'
    );
  }
}
