import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_RANKING_WEIGHTS, type RankingWeights } from './ranking-weights';

export type ExtractorMode = 'auto' | 'llm' | 'heuristic';
export type UpstreamProvider = 'openai' | 'anthropic';

/** Every setting of the service, read from the environment once at boot. */
export interface AppConfig {
  port: number;
  host: string;
  /** A PostgreSQL server; when unset the embedded database in `dataDir` is used. */
  databaseUrl: string | null;
  /** Directory of the embedded database, or `memory://` for a throwaway in-memory one. */
  dataDir: string;
  databasePoolSize: number;
  /**
   * Connections of the server pool that runs the chat's context statement (named, generic plans), apart
   * from `databasePoolSize`.
   */
  databaseContextPoolSize: number;
  /** How long a query waits for a pooled connection before the request fails with 503. */
  databaseAcquireTimeoutMs: number;
  /** Longest wait at boot for another process's migrations (the migration lock). */
  migrationLockTimeoutMs: number;
  /** Pause between two checks of the embedded database's tables for vacuum and analyze. */
  embeddedMaintenanceIntervalMs: number;
  serviceApiKey: string | null;
  bodyLimitBytes: number;
  /** Time limits on receiving a request: its headers, and the whole of it (headers and body). */
  http: { headersTimeoutMs: number; requestTimeoutMs: number };
  upstream: {
    provider: UpstreamProvider;
    baseUrl: string;
    apiKey: string | null;
    timeoutMs: number;
    streamIdleTimeoutMs: number;
    /** A comment is sent on a stream that has been silent this long (0: never). */
    streamKeepAliveMs: number;
  };
  /** Completed turns that may wait to be stored; beyond it, requests wait for room (backpressure). */
  turnQueueSize: number;
  /**
   * Whether a turn's commit also waits for PostgreSQL to flush it to disk (the server's own
   * synchronous_commit). Off, the commit returns once the server holds it, which no crash of the service
   * can undo; a crash of the database server can lose the last moments of turns.
   */
  turnCommitFlush: boolean;
  llm: { baseUrl: string; apiKey: string | null; model: string };
  /**
   * cacheBytes: budget of the profiles' contexts held between requests (context/held-contexts.ts);
   * heldTrustMs: how long a held small profile is used without asking the database while no change of
   * it is notified (0: the database confirms it on every request).
   */
  context: { maxMemories: number; maxChars: number; cacheBytes: number; heldTrustMs: number };
  /** Weights of memory ranking (see memories/memory-ranking.ts). */
  ranking: RankingWeights;
  extractor: ExtractorMode;
  extraction: ExtractionSettings;
  traitSchemasFile: string | null;
  summaryIntervalMinutes: number;
  /** Semantic ranking through an embeddings model; null (EMBEDDINGS_MODEL unset) keeps it off. */
  embeddings: EmbeddingsSettings | null;
  corsOrigins: string[];
  rateLimitPerMinute: number;
  ingestRateLimitPerMinute: number;
  /** Requests per application key per minute, and per application (all its keys); 0 is off. */
  keyRateLimitPerMinute: number;
  applicationRateLimitPerMinute: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Human-readable logs through pino-pretty (a dev dependency: for development only). */
  logPretty: boolean;
  /**
   * Which proxies in front of the service are believed about the client address (X-Forwarded-For), as
   * Express's `trust proxy` takes it: false, true, a hop count, or addresses, subnets and the names
   * loopback, linklocal, uniquelocal. The client address keys the rate limits.
   */
  trustProxy: boolean | number | string;
  /** A Redis server that holds the rate-limit counters, shared by every replica; null keeps them in memory. */
  redisUrl: string | null;
  /** How long a Redis command may take before the request passes without its rate limit checked. */
  redisCommandTimeoutMs: number;
  /** On SIGTERM, how long in-flight requests and streams may take before they are cut. */
  shutdownGraceMs: number;
}

/** The OpenAI-compatible `/embeddings` endpoint that embeds memories and questions. */
export interface EmbeddingsSettings {
  model: string;
  baseUrl: string;
  apiKey: string | null;
  /** Asked of the model when set (`dimensions`); otherwise the model's own size. */
  dimensions: number | null;
  /** Bound on one call; a question whose embedding is late is ranked by its words alone. */
  timeoutMs: number;
}

/** Background extraction, the LLM calls of extraction and summaries, and memory decay. */
export interface ExtractionSettings {
  /** Bound on one LLM call, from sending to the last byte of the answer. */
  llmTimeoutMs: number;
  /** Tries of one LLM call when it fails transiently (5xx, 429, timeout, unreachable, unusable answer). */
  llmAttempts: number;
  /** First pause before a retry; it doubles with every retry (with jitter), capped at 30 s. */
  retryBaseMs: number;
  /** Pause between two sweeps for pending messages; 0 sweeps only at boot. */
  sweepIntervalMs: number;
  /** Profiles extracted at the same time by one process. */
  concurrency: number;
  /** Background tries of one message before it is given up (extracted_at set, extraction_error kept). */
  maxAttempts: number;
  /**
   * After the LLM's last failed try on a batch (its last background attempt, or a failure that trying
   * again cannot mend), the heuristic rules learn from the batch instead of giving it up.
   */
  rulesFallback: boolean;
  /** Pause before a failed batch is tried again; it doubles with every failure, up to an hour. */
  backoffMs: number;
  /**
   * How long a claimed batch stays claimed without news from its process: the process renews the claim
   * every third of it while it works, so a killed process's batch is taken over this long after.
   */
  leaseMs: number;
  /**
   * Background extraction waits while answers keep the process busy (event loop busy at least
   * `yieldUtilization` of the time with answers in flight), for at most this long after its run was
   * scheduled; 0 never waits.
   */
  yieldMaxMs: number;
  /** The share of time the event loop must be busy (with answers in flight) for extraction to wait. */
  yieldUtilization: number;
  /** Pause between two runs of the memory decay job. */
  decayIntervalMs: number;
}

/** The extractor in use: `auto` means the LLM when an LLM key is configured, else the heuristic rules. */
export function effectiveExtractor(config: Pick<AppConfig, 'extractor' | 'llm'>): 'llm' | 'heuristic' {
  if (config.extractor !== 'auto') return config.extractor;
  return config.llm.apiKey !== null ? 'llm' : 'heuristic';
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function readEmbeddings(
  read: EnvReader,
  upstreamBaseUrl: string,
  upstreamApiKey: string | null,
): EmbeddingsSettings | null {
  const model = read.optionalString('EMBEDDINGS_MODEL');
  const settings = {
    baseUrl: read.url('EMBEDDINGS_BASE_URL', upstreamBaseUrl),
    apiKey: read.optionalString('EMBEDDINGS_API_KEY') ?? upstreamApiKey,
    dimensions: read.optionalInteger('EMBEDDINGS_DIMENSIONS', 1, MAX_VECTOR_DIMENSIONS),
    timeoutMs: read.integer('EMBEDDINGS_TIMEOUT_MS', 2_000, 1, 600_000),
  };
  return model === null ? null : { model, ...settings };
}

/** The most dimensions pgvector's `vector` type holds. */
export const MAX_VECTOR_DIMENSIONS = 16_000;

/** Reads and validates the configuration; throws a ConfigError naming the first bad variable. */
export function loadConfig(env: Env): AppConfig {
  return checkCombinations(readConfig(env));
}

/**
 * Settings that are each valid but cannot work together. Background extraction takes at most one
 * pooled connection per profile it works on, briefly: with as many workers as connections, requests
 * could wait behind it.
 */
function checkCombinations(config: AppConfig): AppConfig {
  if (config.databaseUrl !== null && config.extraction.concurrency >= config.databasePoolSize) {
    throw new ConfigError(
      'EXTRACTION_CONCURRENCY',
      `(${config.extraction.concurrency}) must be lower than DATABASE_POOL_SIZE (${config.databasePoolSize}), ` +
        'so that background extraction never takes every database connection',
    );
  }
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `(${config.http.headersTimeoutMs}) must not be above HTTP_REQUEST_TIMEOUT_MS (${config.http.requestTimeoutMs}), ` +
        'the time limit of the whole request',
    );
  }
  return config;
}

function readConfig(env: Env): AppConfig {
  const read = new EnvReader(env);
  const upstreamBaseUrl = read.url('UPSTREAM_BASE_URL', 'https://api.openai.com/v1');
  const upstreamApiKey = read.optionalString('UPSTREAM_API_KEY');
  return {
    port: read.integer('PORT', 3000, 0, 65535),
    host: read.string('HOST', '0.0.0.0'),
    databaseUrl: read.optionalDatabaseUrl('DATABASE_URL'),
    dataDir: read.dataDir('DATA_DIR', './data'),
    databasePoolSize: read.integer('DATABASE_POOL_SIZE', 10, 1, 200),
    databaseContextPoolSize: read.integer('DATABASE_CONTEXT_POOL_SIZE', 8, 1, 200),
    databaseAcquireTimeoutMs: read.integer('DATABASE_ACQUIRE_TIMEOUT_MS', 5_000, 100, 600_000),
    migrationLockTimeoutMs: read.integer('MIGRATION_LOCK_TIMEOUT_MS', 300_000, 1_000, 3_600_000),
    embeddedMaintenanceIntervalMs: read.integer('DB_MAINTENANCE_INTERVAL_MS', 60_000, 1_000, 86_400_000),
    serviceApiKey: read.optionalString('SERVICE_API_KEY'),
    bodyLimitBytes: read.byteSize('BODY_LIMIT', '10mb'),
    http: {
      headersTimeoutMs: read.integer('HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
      requestTimeoutMs: read.integer('HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    },
    upstream: {
      provider: read.oneOf('UPSTREAM_PROVIDER', ['openai', 'anthropic'] as const, 'openai'),
      baseUrl: upstreamBaseUrl,
      apiKey: upstreamApiKey,
      timeoutMs: read.integer('UPSTREAM_TIMEOUT_MS', 60_000, 1, 3_600_000),
      streamIdleTimeoutMs: read.integer('UPSTREAM_STREAM_IDLE_TIMEOUT_MS', 60_000, 1, 3_600_000),
      streamKeepAliveMs: read.integer('UPSTREAM_STREAM_KEEPALIVE_MS', 15_000, 0, 3_600_000),
    },
    turnQueueSize: read.integer('TURN_QUEUE_SIZE', 1_000, 1, 1_000_000),
    turnCommitFlush: read.flag('TURN_COMMIT_FLUSH', false),
    llm: {
      baseUrl: read.url('LLM_BASE_URL', upstreamBaseUrl),
      apiKey: read.optionalString('LLM_API_KEY') ?? upstreamApiKey,
      model: read.string('LLM_MODEL', 'gpt-4o-mini'),
    },
    context: {
      maxMemories: read.integer('CONTEXT_MAX_MEMORIES', 10, 0, 100),
      maxChars: read.integer('CONTEXT_MAX_CHARS', 4000, 200, 100_000),
      cacheBytes: read.integer('CONTEXT_CACHE_MB', 64, 0, 65_536) * 1024 * 1024,
      heldTrustMs: read.integer('CONTEXT_HELD_TRUST_MS', 5_000, 0, 3_600_000),
    },
    ranking: {
      relevance: read.decimal('RANK_WEIGHT_RELEVANCE', DEFAULT_RANKING_WEIGHTS.relevance, 0, 100),
      importance: read.decimal('RANK_WEIGHT_IMPORTANCE', DEFAULT_RANKING_WEIGHTS.importance, 0, 100),
      recency: read.decimal('RANK_WEIGHT_RECENCY', DEFAULT_RANKING_WEIGHTS.recency, 0, 100),
      recencyHalfLifeDays: read.decimal(
        'RANK_RECENCY_HALF_LIFE_DAYS',
        DEFAULT_RANKING_WEIGHTS.recencyHalfLifeDays,
        0.01,
        36_500,
      ),
      semanticShare: read.decimal('RANK_SEMANTIC_SHARE', DEFAULT_RANKING_WEIGHTS.semanticShare, 0, 1),
      associations: DEFAULT_RANKING_WEIGHTS.associations,
    },
    extractor: read.oneOf('EXTRACTOR', ['auto', 'llm', 'heuristic'] as const, 'auto'),
    extraction: {
      llmTimeoutMs: read.integer('LLM_TIMEOUT_MS', 60_000, 1, 3_600_000),
      llmAttempts: read.integer('EXTRACTION_LLM_ATTEMPTS', 3, 1, 10),
      retryBaseMs: read.integer('EXTRACTION_RETRY_BASE_MS', 1_000, 0, 60_000),
      sweepIntervalMs: read.integer('EXTRACTION_SWEEP_INTERVAL_MS', 30_000, 0, 86_400_000),
      concurrency: read.integer('EXTRACTION_CONCURRENCY', 2, 1, 64),
      maxAttempts: read.integer('EXTRACTION_MAX_ATTEMPTS', 5, 1, 100),
      rulesFallback: read.flag('EXTRACTION_RULES_FALLBACK', true),
      backoffMs: read.integer('EXTRACTION_BACKOFF_MS', 30_000, 0, 3_600_000),
      leaseMs: read.integer('EXTRACTION_LEASE_MS', 30_000, 1_000, 3_600_000),
      yieldMaxMs: read.integer('EXTRACTION_YIELD_MAX_MS', 30_000, 0, 3_600_000),
      yieldUtilization: read.decimal('EXTRACTION_YIELD_UTILIZATION', 0.8, 0, 1),
      decayIntervalMs: read.integer('MEMORY_DECAY_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
    },
    traitSchemasFile: read.optionalString('TRAIT_SCHEMAS_FILE'),
    summaryIntervalMinutes: read.integer('SUMMARY_INTERVAL_MINUTES', 60, 0, 525_600),
    embeddings: readEmbeddings(read, upstreamBaseUrl, upstreamApiKey),
    corsOrigins: read.list('CORS_ORIGINS'),
    rateLimitPerMinute: read.integer('RATE_LIMIT_PER_MINUTE', 600, 0, 10_000_000),
    ingestRateLimitPerMinute: read.integer('INGEST_RATE_LIMIT_PER_MINUTE', 60, 0, 10_000_000),
    keyRateLimitPerMinute: read.integer('KEY_RATE_LIMIT_PER_MINUTE', 0, 0, 10_000_000),
    applicationRateLimitPerMinute: read.integer('APPLICATION_RATE_LIMIT_PER_MINUTE', 0, 0, 10_000_000),
    logLevel: read.oneOf(
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    logPretty: read.flag('LOG_PRETTY', false),
    trustProxy: read.trustProxy('TRUST_PROXY'),
    redisUrl: read.optionalRedisUrl('REDIS_URL'),
    redisCommandTimeoutMs: read.integer('REDIS_COMMAND_TIMEOUT_MS', 300, 10, 60_000),
    shutdownGraceMs: read.integer('SHUTDOWN_GRACE_MS', 25_000, 0, 3_600_000),
  };
}

class EnvReader {
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string): string | null {
    return this.raw(name) ?? null;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value)) throw new ConfigError(name, `must be a whole number, got "${value}"`);
    const parsed = Number(value);
    if (parsed < min || parsed > max)
      throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return parsed;
  }

  optionalInteger(name: string, min: number, max: number): number | null {
    return this.raw(name) === undefined ? null : this.integer(name, min, min, max);
  }

  decimal(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+(\.\d+)?$/.test(value)) throw new ConfigError(name, `must be a number, got "${value}"`);
    const parsed = Number(value);
    if (parsed < min || parsed > max)
      throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return parsed;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const lower = value.toLowerCase();
    const match = allowed.find((candidate) => candidate === lower);
    if (!match) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
    return match;
  }

  url(name: string, fallback: string): string {
    const value = this.raw(name) ?? fallback;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(name, `must be an http(s) URL, got "${value}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ConfigError(name, `must be an http(s) URL, got "${value}"`);
    }
    if (parsed.search || parsed.hash)
      throw new ConfigError(name, 'must not carry a query string or fragment');
    return value.replace(/\/+$/, '');
  }

  optionalDatabaseUrl(name: string): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    if (!/^postgres(ql)?:\/\//.test(value)) {
      throw new ConfigError(name, 'must be a postgres:// or postgresql:// URL');
    }
    return value;
  }

  dataDir(name: string, fallback: string): string {
    const value = this.raw(name) ?? fallback;
    if (value === 'memory://') return value;
    return isAbsolute(value) ? value : resolve(value);
  }

  byteSize(name: string, fallback: string): number {
    const value = (this.raw(name) ?? fallback).toLowerCase();
    const match = /^(\d+)\s*(b|kb|mb)?$/.exec(value);
    if (!match) throw new ConfigError(name, `must be a size such as 10mb, 512kb or 1048576, got "${value}"`);
    const unit = match[2] ?? 'b';
    const bytes = Number(match[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1);
    if (bytes < 1024 * 1024 || bytes > 1024 * 1024 * 1024) {
      throw new ConfigError(name, 'must be between 1mb and 1024mb');
    }
    return bytes;
  }

  flag(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    throw new ConfigError(name, `must be 1/true/yes/on or 0/false/no/off, got "${value}"`);
  }

  trustProxy(name: string): boolean | number | string {
    const value = this.raw(name);
    if (value === undefined) return false;
    const lower = value.toLowerCase();
    if (lower === 'false' || lower === '0') return false;
    if (lower === 'true') return true;
    if (/^\d+$/.test(value)) return Number(value);
    const entries = this.list(name);
    const bad = entries.find((entry) => !isTrustedProxyEntry(entry));
    if (bad !== undefined) {
      throw new ConfigError(
        name,
        `must be true, false, a hop count, or addresses/subnets (or loopback, linklocal, uniquelocal), got "${bad}"`,
      );
    }
    return entries.join(',');
  }

  optionalRedisUrl(name: string): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    if (!/^rediss?:\/\/[^\s]+$/.test(value))
      throw new ConfigError(name, 'must be a redis:// or rediss:// URL');
    return value;
  }

  list(name: string): string[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  }
}

const NAMED_PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, an address/prefix subnet, or one of Express's named ranges. */
function isTrustedProxyEntry(entry: string): boolean {
  if (NAMED_PROXY_RANGES.has(entry.toLowerCase())) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d+$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
