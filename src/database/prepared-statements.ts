import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Pool, PoolClient } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryResult } from 'typeorm/query-runner/QueryResult';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { EmbeddedPgConnection } from './embedded-pg-connection';
import { HNSW_EF_SEARCH, HNSW_ITERATIVE_SCAN } from './session-settings';

/** A named prepared statement: its name, text and parameter values. */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

const namedTexts = new Map<string, string>();

/**
 * The text of the statement named `name`, built by `build` the first time: a name stands for one text
 * (pg refuses a second text under a name it has prepared, comparing the two on every call), so the hot
 * statements are not rebuilt from their pieces per call, and pg compares the same string.
 */
export function namedStatementText(name: string, build: () => string): string {
  let text = namedTexts.get(name);
  if (text === undefined) {
    text = build();
    namedTexts.set(name, text);
  }
  return text;
}

/** Settings of the hot statements' connections (see below and session-settings.ts). */
export const HOT_STATEMENT_OPTIONS = `-c plan_cache_mode=force_generic_plan -c hnsw.iterative_scan=${HNSW_ITERATIVE_SCAN} -c hnsw.ef_search=${HNSW_EF_SEARCH}`;

const FORCE_GENERIC_PLANS = 'SET plan_cache_mode = force_generic_plan';
const DEFAULT_PLANS = 'RESET plan_cache_mode';

/**
 * Runs a hot query as a named prepared statement, so that PostgreSQL plans it once per connection
 * instead of on every call (TypeORM's `query` always sends unnamed statements). Only for queries whose
 * plan does not depend on their parameter values.
 *
 * On a server these statements get a pool of their own (DATABASE_CONTEXT_POOL_SIZE) with `plan_cache_mode =
 * force_generic_plan`: left to itself, PostgreSQL kept re-planning the chat context query (custom plans,
 * 1.1 ms of a 2.5 ms call), and forcing generic plans on the main pool would change every other query.
 * The embedded database has one connection, which these statements share: they take it, force generic
 * plans for their own execution and reset the setting before giving it back (left to itself PGlite
 * re-planned the chat context statement on every call: 2.6 ms a call instead of 1.4).
 */
@Injectable()
export class PreparedStatements implements OnApplicationShutdown {
  private readonly logger = new Logger('PreparedStatements');
  private readonly hotPool: Pool | null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.hotPool = config.databaseUrl
      ? new Pool({
          connectionString: config.databaseUrl,
          max: config.databaseContextPoolSize,
          connectionTimeoutMillis: config.databaseAcquireTimeoutMs,
          options: HOT_STATEMENT_OPTIONS,
          application_name: 'profile-memory-service',
        })
      : null;
    // An idle connection that breaks must not take the process down; the pool replaces it.
    this.hotPool?.on('error', (error) =>
      this.logger.warn(`idle database connection failed: ${error.message}`),
    );
  }

  async query<T extends object>({ name, text, values }: NamedStatement): Promise<T[]> {
    if (this.hotPool) return (await this.hotPool.query<T>({ name, text, values })).rows;
    const client = await mainPool(this.dataSource).connect();
    let broken: Error | undefined;
    try {
      await client.query(FORCE_GENERIC_PLANS);
      try {
        return (await client.query<T>({ name, text, values })).rows;
      } finally {
        await client.query(DEFAULT_PLANS).catch((error: Error) => {
          broken = error;
          this.logger.warn(`plan_cache_mode not reset: ${error.message}`);
        });
      }
    } finally {
      client.release(broken);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.hotPool?.end();
  }
}

/** TypeORM's pg pool, with the options it was made with (`connection` on the embedded database). */
function mainPool(dataSource: DataSource): Pool & { options: { connection?: unknown } } {
  return (dataSource.driver as PostgresDriver).master as Pool & { options: { connection?: unknown } };
}

/**
 * A batched statement outside a transaction that runs for every chat turn, as a named prepared statement
 * on both databases: parsed and planned once per connection, for a statement whose plan does not depend
 * on its values. On the embedded database parsing and planning cost more than running it (the turns'
 * insert of 40 rows: 2.5 -> 1.5 ms of PGlite, which holds the one session); on a server an answer waits for it.
 */
export async function queryNamed<T extends object>(
  dataSource: DataSource,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const pool = mainPool(dataSource);
  if (!(pool.options.connection instanceof EmbeddedPgConnection)) {
    return (await pool.query<T>({ name, text, values })).rows;
  }
  const client = await pool.connect();
  try {
    return (await client.query<T>({ name, text, values })).rows;
  } finally {
    client.release();
  }
}

/**
 * A statement of a transaction (the manager TypeORM's `transaction` hands over) that runs on every chat
 * turn. On the embedded database it is a named prepared statement, parsed once and, once its plan does
 * not depend on the values, planned once: in PGlite parsing and planning cost more than running these
 * statements, and naming the extraction claim's three took a learnt chat turn from 2.0 to 1.5 ms of
 * CPU. On a server they stay unnamed, planned with their values on every call: the generic plans
 * PostgreSQL settled on were slower there (the claim's write 0.32 -> 2.1 ms under a backlog, a bitmap
 * scan of every pending message for the completion). Returns the rows and, for a write, how many rows
 * it changed.
 */
export async function queryInTransaction<T extends object>(
  manager: EntityManager,
  name: string,
  text: string,
  values: unknown[],
): Promise<{ rows: T[]; rowCount: number }> {
  const runner = manager.queryRunner as PostgresQueryRunner | undefined;
  if (!runner?.isTransactionActive) throw new Error(`${name}: not in a transaction`);
  const client = (await runner.connect()) as PoolClient & { connection?: unknown };
  if (client.connection instanceof EmbeddedPgConnection) {
    const result = await client.query<T>({ name, text, values });
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }
  const result = (await runner.query(text, values, true)) as QueryResult<T>;
  return { rows: result.records, rowCount: result.affected ?? 0 };
}
