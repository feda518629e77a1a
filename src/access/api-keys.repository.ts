import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Scope } from '../common/request-access';

export interface StoredApiKey {
  id: string;
  name: string;
  prefix: string;
  application: { id: string; name: string };
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A key as the access guard checks it: its stored hash too. */
export interface VerifiableApiKey extends StoredApiKey {
  secretHash: Buffer;
}

interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  application_id: string;
  application_name: string;
  scopes: Scope[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  secret_hash: Buffer;
}

const KEY_COLUMNS = `k.id, k.name, k.prefix, k.application_id, a.name AS application_name, k.scopes, k.created_at,
  k.expires_at, k.last_used_at, k.revoked_at`;

export interface NewApiKey {
  applicationId: string;
  name: string;
  prefix: string;
  secretHash: Buffer;
  scopes: Scope[];
  expiresAt: Date | null;
}

/** The api_keys table. Secrets are never stored, only their hash. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async create(manager: EntityManager, key: NewApiKey): Promise<StoredApiKey> {
    const rows: ApiKeyRow[] = await manager.query(
      `WITH k AS (
         INSERT INTO api_keys (application_id, name, prefix, secret_hash, scopes, expires_at)
         VALUES ($1, $2, $3, $4, $5::text[], $6) RETURNING *)
       SELECT ${KEY_COLUMNS} FROM k JOIN applications a ON a.id = k.application_id`,
      [key.applicationId, key.name, key.prefix, key.secretHash, key.scopes, key.expiresAt],
    );
    return fromRow(rows[0]);
  }

  /** The keys of an application (every application's when null), newest first, revoked ones too. */
  async list(applicationId: string | null): Promise<StoredApiKey[]> {
    const rows: ApiKeyRow[] = await this.dataSource.query(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN applications a ON a.id = k.application_id
       WHERE $1::uuid IS NULL OR k.application_id = $1::uuid ORDER BY k.created_at DESC, k.id DESC`,
      [applicationId],
    );
    return rows.map(fromRow);
  }

  async findByPrefix(prefix: string): Promise<VerifiableApiKey | null> {
    const rows: ApiKeyRow[] = await this.dataSource.query(
      `SELECT ${KEY_COLUMNS}, k.secret_hash FROM api_keys k JOIN applications a ON a.id = k.application_id
       WHERE k.prefix = $1`,
      [prefix],
    );
    return rows[0] ? { ...fromRow(rows[0]), secretHash: rows[0].secret_hash } : null;
  }

  /** Revokes the key of this application (any application's when null); null when there is no such key. */
  async revoke(
    manager: EntityManager,
    id: string,
    applicationId: string | null,
  ): Promise<StoredApiKey | null> {
    const rows: ApiKeyRow[] = await manager.query(
      `WITH k AS (
         UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1 AND ($2::uuid IS NULL OR application_id = $2::uuid) RETURNING *)
       SELECT ${KEY_COLUMNS} FROM k JOIN applications a ON a.id = k.application_id`,
      [id, applicationId],
    );
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async touch(id: string): Promise<void> {
    await this.dataSource.query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [id]);
  }
}

function fromRow(row: ApiKeyRow): StoredApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    application: { id: row.application_id, name: row.application_name },
    scopes: row.scopes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}
