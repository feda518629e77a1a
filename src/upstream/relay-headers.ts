export type HeaderMap = Record<string, string | string[]>;

export interface RelayHeadersOptions {
  /** Set when the body we relay is no longer in the upstream's content-encoding. */
  bodyDecoded?: boolean;
}

const RELAYED_EXACT = new Set([
  'content-type',
  'retry-after',
  'retry-after-ms',
  'x-request-id',
  'request-id',
  'openai-processing-ms',
  'openai-version',
  'openai-model',
]);

const RELAYED_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-'];

/**
 * Headers the service sets itself (its request id, its own rate limit): the upstream's are relayed
 * renamed, `x-request-id` as `x-upstream-request-id` and so on.
 */
const SERVICE_OWNED = new Set([
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
]);

/** Picks the upstream response headers our own client should see; everything hop-by-hop or account-identifying stays behind. */
export function relayHeaders(
  upstreamHeaders: Record<string, string | string[] | undefined>,
  options: RelayHeadersOptions = {},
): HeaderMap {
  const relayed: HeaderMap = {};
  for (const [rawName, value] of Object.entries(upstreamHeaders)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (shouldRelay(name, options))
      relayed[SERVICE_OWNED.has(name) ? name.replace(/^x-/, 'x-upstream-') : name] = value;
  }
  return relayed;
}

function shouldRelay(name: string, options: RelayHeadersOptions): boolean {
  if (RELAYED_EXACT.has(name)) return true;
  if (name === 'content-encoding') return options.bodyDecoded !== true;
  return RELAYED_PREFIXES.some((prefix) => name.startsWith(prefix));
}
