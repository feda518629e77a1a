import { SetMetadata } from '@nestjs/common';

export const RATE_LIMIT_BUCKET = 'rateLimitBucket';

/**
 * Which limit a route counts against: `default` (RATE_LIMIT_PER_MINUTE, every route without a
 * decorator), `ingest` (INGEST_RATE_LIMIT_PER_MINUTE), or `none`.
 */
export type RateLimitBucket = 'default' | 'ingest' | 'none';

/** The route counts against the ingest limit (its own, stricter bucket) instead of the general one. */
export const IngestRateLimit = () => SetMetadata(RATE_LIMIT_BUCKET, 'ingest' satisfies RateLimitBucket);

/** The route or controller is never rate limited (probes, metrics). */
export const NoRateLimit = () => SetMetadata(RATE_LIMIT_BUCKET, 'none' satisfies RateLimitBucket);
