import type { Client } from 'pg';
import { DataSourceOptions } from 'typeorm';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema';
import { MemoryRankingIndexes1764000000000 } from './migrations/1764000000000-memory-ranking-indexes';
import { MessageTraitOverrides1763800000000 } from './migrations/1763800000000-message-trait-overrides';
import { MemoryDecayProgress1763900000000 } from './migrations/1763900000000-memory-decay-progress';
import { MemoryEmbeddings1764100000000 } from './migrations/1764100000000-memory-embeddings';
import { MemoryExactWords1764200000000 } from './migrations/1764200000000-memory-exact-words';
import { MemoryRevision1764400000000 } from './migrations/1764400000000-memory-revision';
import { ClaimedMessagesIndex1764500000000 } from './migrations/1764500000000-claimed-messages-index';
import { WorkLeases1764310000000 } from './migrations/1764310000000-work-leases';
import { ProfileChangeNotifications1764600000000 } from './migrations/1764600000000-profile-change-notifications';
import { MemoryTouchesUnannounced1764700000000 } from './migrations/1764700000000-memory-touches-unannounced';
import { SupersessionChains1764800000000 } from './migrations/1764800000000-supersession-chains';
import { HistoryPurge1764810000000 } from './migrations/1764810000000-history-purge';
import { ExtractionFallback1765200000000 } from './migrations/1765200000000-extraction-fallback';
import { ApplicationsKeysAudit1766000000000 } from './migrations/1766000000000-applications-keys-audit';
import { TurnInjectedContext1767000000000 } from './migrations/1767000000000-turn-injected-context';
import { EmbeddedDatabase } from './embedded-database';
import { embeddedPgOptions } from './embedded-pg-connection';

/** How long a query waits for a connection of the pool unless DATABASE_ACQUIRE_TIMEOUT_MS says otherwise. */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 5_000;

export const MIGRATIONS = [
  InitialSchema1763700000000,
  MessageTraitOverrides1763800000000,
  MemoryDecayProgress1763900000000,
  MemoryRankingIndexes1764000000000,
  MemoryEmbeddings1764100000000,
  MemoryExactWords1764200000000,
  WorkLeases1764310000000,
  MemoryRevision1764400000000,
  ClaimedMessagesIndex1764500000000,
  ProfileChangeNotifications1764600000000,
  MemoryTouchesUnannounced1764700000000,
  SupersessionChains1764800000000,
  HistoryPurge1764810000000,
  ExtractionFallback1765200000000,
  ApplicationsKeysAudit1766000000000,
  TurnInjectedContext1767000000000,
];

/**
 * The one set of TypeORM options, used by the app and by the CLI (ormconfig.ts). Both targets use the
 * `postgres` driver and `pg`: a server through DATABASE_URL, or the embedded PGlite through
 * EmbeddedPgConnection with a pool of one (PGlite is a single session). `entities` are the app's (AppModule and ormconfig.ts
 * pass them; running migrations needs none). `client` is the pools' pg client class (the app's listens
 * for profile changes: ProfileChangeFeed).
 */
export function buildDataSourceOptions(
  target: { databaseUrl: string; poolSize: number } | { embedded: EmbeddedDatabase },
  {
    entities = [],
    acquireTimeoutMs = DEFAULT_ACQUIRE_TIMEOUT_MS,
    client,
  }: { entities?: DataSourceOptions['entities']; acquireTimeoutMs?: number; client?: typeof Client } = {},
): DataSourceOptions {
  const clientClass = client ? { Client: client } : {};
  const base = {
    type: 'postgres' as const,
    entities,
    migrations: MIGRATIONS,
    migrationsRun: false, // migrate() runs them, under a lock
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    installExtensions: false,
    uuidExtension: 'pgcrypto' as const,
  };
  if ('databaseUrl' in target) {
    return {
      ...base,
      url: target.databaseUrl,
      poolSize: target.poolSize,
      applicationName: 'profile-memory-service',
      // pg's wait for a pooled connection (or a new one): a starved pool fails fast, never hangs
      connectTimeoutMS: acquireTimeoutMs,
      extra: clientClass,
    };
  }
  return {
    ...base,
    extra: { ...embeddedPgOptions(target.embedded.thread), max: 1, idleTimeoutMillis: 0, ...clientClass },
    connectTimeoutMS: acquireTimeoutMs,
  };
}
