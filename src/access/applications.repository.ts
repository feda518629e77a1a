import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { UUID_PATTERN } from '../common/iso';

export interface StoredApplication {
  id: string;
  name: string;
  createdAt: Date;
}

interface ApplicationRow {
  id: string;
  name: string;
  created_at: Date;
}

/** The applications table: an application is named by its id or its name. */
@Injectable()
export class ApplicationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(
    idOrName: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<StoredApplication | null> {
    const rows: ApplicationRow[] = UUID_PATTERN.test(idOrName)
      ? await manager.query(
          `SELECT id, name, created_at FROM applications WHERE id = $1::uuid OR name = $2
           ORDER BY (id = $1::uuid) DESC LIMIT 1`,
          [idOrName.toLowerCase(), idOrName],
        )
      : await manager.query(`SELECT id, name, created_at FROM applications WHERE name = $1`, [idOrName]);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async list(): Promise<StoredApplication[]> {
    const rows: ApplicationRow[] = await this.dataSource.query(
      `SELECT id, name, created_at FROM applications ORDER BY created_at, id`,
    );
    return rows.map(fromRow);
  }

  /** Creates the application; null when the name is taken. */
  async create(manager: EntityManager, name: string): Promise<StoredApplication | null> {
    const rows: ApplicationRow[] = await manager.query(
      `INSERT INTO applications (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING id, name, created_at`,
      [name],
    );
    return rows[0] ? fromRow(rows[0]) : null;
  }
}

function fromRow(row: ApplicationRow): StoredApplication {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}
