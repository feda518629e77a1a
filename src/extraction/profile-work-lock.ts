import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

/** Namespace (first key) of the session lock held while a worker extracts one profile. */
export const WORKER_LOCK_NAMESPACE = 0x50_4d_53_02;

/**
 * Makes one worker across all processes extract a profile at a time. On a PostgreSQL server it holds a
 * session advisory lock on a connection of its own for the whole run (LLM call included); the lock
 * dies with the connection, so a killed process frees it. The embedded database has exactly one
 * process (its data directory is locked) and one connection, which must not be held across an LLM call:
 * there the worker's own per-profile queue is the lock.
 */
@Injectable()
export class ProfileWorkLock {
  private readonly useSessionLock: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // Holding a connection for the lock needs a second one for the work itself.
    this.useSessionLock = config.databaseUrl !== null && config.databasePoolSize >= 2;
  }

  /** Runs `work` holding the profile's lock; returns false without running it when another holds it. */
  async tryWithLock(profileId: string, work: () => Promise<void>): Promise<boolean> {
    if (!this.useSessionLock) {
      await work();
      return true;
    }
    const driver = this.dataSource.driver as PostgresDriver;
    const [client, release] = (await driver.obtainMasterConnection()) as [
      PoolClient,
      (error?: Error) => void,
    ];
    let broken: Error | undefined;
    const markBroken = (error: unknown) => {
      broken = error instanceof Error ? error : new Error(String(error));
    };
    try {
      const locked = await client
        .query<{ locked: boolean }>(`SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked`, [
          WORKER_LOCK_NAMESPACE,
          profileId,
        ])
        .catch((error: unknown) => {
          markBroken(error);
          throw error;
        });
      if (!locked.rows[0]?.locked) return false;
      try {
        await work();
      } finally {
        await client
          .query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [WORKER_LOCK_NAMESPACE, profileId])
          .catch(markBroken);
      }
      return true;
    } finally {
      // A connection that may still hold the lock is closed rather than returned to the pool.
      release(broken);
    }
  }
}
