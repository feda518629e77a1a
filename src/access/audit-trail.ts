import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../common/request-access';

/** What an audit event names: ids and keys, never content. */
export interface AuditTarget {
  profileId?: string;
  memoryId?: string;
  traitKey?: string;
  keyId?: string;
  applicationId?: string;
  /** The public prefix of a key that failed authentication. */
  keyPrefix?: string;
}

export type AuditOutcome = 'success' | 'denied';

export interface AuditEvent {
  id: string;
  at: Date;
  keyId: string | null;
  applicationId: string | null;
  action: string;
  target: AuditTarget;
  requestId: string | null;
  outcome: AuditOutcome;
}

export interface AuditQuery {
  applicationId: string | null;
  profileId?: string;
  action?: string;
  since?: Date;
  /** The id of the last event of the previous page: the page holds older ones. */
  before?: string;
  limit: number;
}

interface AuditRow {
  id: string;
  at: Date;
  key_id: string | null;
  application_id: string | null;
  action: string;
  target: AuditTarget;
  request_id: string | null;
  outcome: AuditOutcome;
}

/**
 * The audit trail: who changed, exported or erased what, and every failed authentication. A change
 * records its event with the manager of its own transaction, so the change and its event commit together
 * or not at all.
 */
@Injectable()
export class AuditTrail {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async record(
    manager: EntityManager,
    actor: Actor | null,
    action: string,
    target: AuditTarget,
    outcome: AuditOutcome = 'success',
  ): Promise<void> {
    await manager.query(
      `INSERT INTO audit_events (key_id, application_id, action, profile_id, target, request_id, outcome)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
      [
        actor?.keyId ?? null,
        actor?.applicationId ?? null,
        action,
        target.profileId ?? null,
        JSON.stringify(target),
        actor?.requestId ?? null,
        outcome,
      ],
    );
  }

  /**
   * `work` (a transaction's body), followed in the same transaction by its audit event, whose target is
   * read from what the work returned.
   */
  audited<T>(
    actor: Actor,
    action: string,
    target: (result: T) => AuditTarget,
    work: (manager: EntityManager) => Promise<T>,
  ): (manager: EntityManager) => Promise<T> {
    return async (manager) => {
      const result = await work(manager);
      await this.record(manager, actor, action, target(result));
      return result;
    };
  }

  /** A failed authentication: no key is known, only where the request came from. */
  async recordDenied(requestId: string | null, prefix: string | null): Promise<void> {
    await this.record(
      this.dataSource.manager,
      { keyId: null, applicationId: null, requestId },
      'auth.failed',
      prefix === null ? {} : { keyPrefix: prefix },
      'denied',
    );
  }

  async list(query: AuditQuery): Promise<AuditEvent[]> {
    const rows: AuditRow[] = await this.dataSource.query(
      `SELECT id::text, at, key_id, application_id, action, target, request_id, outcome FROM audit_events
       WHERE ($1::uuid IS NULL OR application_id = $1::uuid)
         AND ($2::uuid IS NULL OR profile_id = $2::uuid)
         AND ($3::text IS NULL OR action = $3::text)
         AND ($4::timestamptz IS NULL OR at >= $4::timestamptz)
         AND ($5::bigint IS NULL OR id < $5::bigint)
       ORDER BY id DESC LIMIT $6`,
      [
        query.applicationId,
        query.profileId ?? null,
        query.action ?? null,
        query.since ?? null,
        query.before ?? null,
        query.limit,
      ],
    );
    return rows.map(fromRow);
  }

  /** Every event that names the profile, oldest first (for its export). */
  async ofProfile(manager: EntityManager, profileId: string): Promise<AuditEvent[]> {
    const rows: AuditRow[] = await manager.query(
      `SELECT id::text, at, key_id, application_id, action, target, request_id, outcome FROM audit_events
       WHERE profile_id = $1 ORDER BY id`,
      [profileId],
    );
    return rows.map(fromRow);
  }
}

function fromRow(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    at: row.at,
    keyId: row.key_id,
    applicationId: row.application_id,
    action: row.action,
    target: row.target,
    requestId: row.request_id,
    outcome: row.outcome,
  };
}
