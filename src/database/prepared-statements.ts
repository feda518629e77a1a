import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Runs a hot query as a named prepared statement on the driver's `pg` pool, so that PostgreSQL plans it
 * once per connection instead of on every call (TypeORM's `query` always sends unnamed statements).
 * Only for queries whose plan does not depend on their parameter values: a generic plan is used after
 * the first executions.
 */
@Injectable()
export class PreparedStatements {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async query<T extends object>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    const result = await pool.query<T>({ name, text, values });
    return result.rows;
  }
}
