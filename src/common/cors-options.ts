import type { CorsOptions } from '@nestjs/common/interfaces/external/cors-options.interface';

/** Request headers a browser client may send: ours, the proxy's, and the usual JSON ones. */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-Id',
  'X-Service-Id',
  'X-Service-Traits',
  'X-Upstream-Key',
];

/** Response headers a browser client may read. */
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Service-Context',
  'X-Service-Context-Ids',
];

/** CORS for the origins of CORS_ORIGINS (`*` allows any); no cookies, so no credentials. */
export function corsOptions(origins: string[]): CorsOptions {
  return {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
  };
}
