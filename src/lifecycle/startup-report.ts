import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import { APP_TITLE, APP_VERSION } from '../app-info';
import { displayPath } from '../common/display';
import { AppConfig, effectiveExtractor } from '../config/app-config';
import { IN_MEMORY_DATA_DIR } from '../database/embedded-database';

/** The lines the service prints at boot, as text: what it is, where its data is, what it calls. */

export function describeService(): string {
  return `${APP_TITLE} ${APP_VERSION}: a memory layer for LLM applications (proxy at /v1, profiles at /api)`;
}

/** The database, never its credentials. */
export function describeDatabase(config: AppConfig): string {
  if (config.databaseUrl !== null) {
    const url = new URL(config.databaseUrl);
    const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
    return `database: PostgreSQL server ${url.hostname}:${url.port || '5432'}${name ? `, database ${name}` : ''}`;
  }
  if (config.dataDir === IN_MEMORY_DATA_DIR) {
    return 'database: embedded PostgreSQL (PGlite) in memory: nothing is kept after exit';
  }
  return `database: embedded PostgreSQL (PGlite) in ${displayPath(config.dataDir)}`;
}

/** Which upstream the proxy relays to, and what learning will call. */
export function describeModels(config: AppConfig): string {
  const upstream =
    `upstream: ${config.upstream.provider} API at ${hostOf(config.upstream.baseUrl)}` +
    (config.upstream.apiKey === null ? ' (no UPSTREAM_API_KEY: callers send X-Upstream-Key)' : '');
  const llm = `${config.llm.model} at ${hostOf(config.llm.baseUrl)}`;
  let extractor: string;
  if (effectiveExtractor(config) === 'llm') {
    const onFailure = config.extraction.rulesFallback
      ? "when the LLM's last try on a turn fails, the rules learn from it instead"
      : "when the LLM's last try on a turn fails, the turn is given up (EXTRACTION_RULES_FALLBACK=false)";
    extractor =
      `extractor: llm, each conversation turn and ingested text is sent to ${llm} to learn from it; ` +
      `${onFailure}; GET /api/profiles/{id} shows its learning state`;
  } else if (config.extractor === 'heuristic') {
    extractor = 'extractor: heuristic (rules, no LLM calls)';
  } else {
    extractor = `extractor: heuristic (rules, no LLM calls: no LLM key; with LLM_API_KEY or UPSTREAM_API_KEY it would call ${llm})`;
  }
  const embeddings = config.embeddings
    ? `; semantic ranking: ${config.embeddings.model} at ${hostOf(config.embeddings.baseUrl)}`
    : '';
  return `${upstream}; ${extractor}${embeddings}`;
}

/** A warning when anyone who reaches the port can read every profile and chat on the operator's key. */
export function exposureWarning(config: AppConfig, address: AddressInfo): string | null {
  if (config.serviceApiKey !== null || isLoopback(address.address)) return null;
  return (
    `SERVICE_API_KEY is not set and the service listens on ${address.address}: anyone who can reach ` +
    `port ${address.port} can read and delete every profile and chat on the upstream key. Set ` +
    'SERVICE_API_KEY, or HOST=127.0.0.1 to accept local connections only.'
  );
}

export function listeningLine(address: AddressInfo): string {
  const host = isIP(address.address) === 6 ? `[${address.address}]` : address.address;
  return `listening on http://${host}:${address.port} (docs at /docs)`;
}

function isLoopback(address: string): boolean {
  const v4 = address.replace(/^::ffff:/, '');
  return address === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}

function hostOf(url: string): string {
  return new URL(url).host;
}
