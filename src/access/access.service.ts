import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import type { RequestCaller as Caller, Scope } from '../common/request-access';
import { ApiKeysRepository, StoredApiKey } from './api-keys.repository';
import { ApplicationsRepository, StoredApplication } from './applications.repository';
import { AuditEvent, AuditTrail } from './audit-trail';
import { newKeySecret } from './key-secrets';

export interface NewKey {
  application: string;
  scopes: Scope[];
  name: string;
  expiresAt?: string;
}

export interface AuditFilter {
  application?: string;
  profile?: string;
  action?: string;
  since?: string;
  cursor?: string;
  limit: number;
}

/**
 * Applications, their keys and the audit trail. The root key manages every application; an application's
 * admin key manages its own keys and reads its own audit events. Each change commits with its audit event.
 */
@Injectable()
export class AccessService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly applications: ApplicationsRepository,
    private readonly keys: ApiKeysRepository,
    private readonly audit: AuditTrail,
  ) {}

  async createApplication(caller: Caller, name: string): Promise<StoredApplication> {
    if (!caller.access.root) throw rootOnly('create applications');
    return this.dataSource.transaction(async (manager) => {
      const created = await this.applications.create(manager, name);
      if (created === null) {
        throw new ApiError(
          HttpStatus.CONFLICT,
          'application_exists',
          `An application "${name}" exists.`,
          'name',
        );
      }
      await this.audit.record(manager, caller.actor, 'application.create', { applicationId: created.id });
      return created;
    });
  }

  async listApplications(caller: Caller): Promise<StoredApplication[]> {
    const all = await this.applications.list();
    return caller.access.root
      ? all
      : all.filter((application) => application.id === caller.access.application.id);
  }

  /** Creates a key of an application; the secret is in this answer only. */
  async createKey(caller: Caller, key: NewKey): Promise<{ key: StoredApiKey; secret: string }> {
    const application = await this.visibleApplication(caller, key.application);
    const expiresAt = key.expiresAt === undefined ? null : new Date(key.expiresAt);
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new ApiError(
        HttpStatus.BAD_REQUEST,
        'invalid_expires_at',
        'expiresAt must be in the future.',
        'expiresAt',
      );
    }
    const secret = newKeySecret();
    return this.dataSource.transaction(async (manager) => {
      const stored = await this.keys.create(manager, {
        applicationId: application.id,
        name: key.name,
        prefix: secret.prefix,
        secretHash: secret.hash,
        scopes: [...new Set(key.scopes)],
        expiresAt,
      });
      await this.audit.record(manager, caller.actor, 'key.create', {
        keyId: stored.id,
        applicationId: application.id,
      });
      return { key: stored, secret: secret.secret };
    });
  }

  listKeys(caller: Caller): Promise<StoredApiKey[]> {
    return this.keys.list(caller.access.root ? null : caller.access.application.id);
  }

  /** Revokes a key: every replica refuses it within a second (KEY_CACHE_MS). */
  async revokeKey(caller: Caller, id: string): Promise<StoredApiKey> {
    return this.dataSource.transaction(async (manager) => {
      const revoked = /^[0-9a-f-]{36}$/i.test(id)
        ? await this.keys.revoke(
            manager,
            id.toLowerCase(),
            caller.access.root ? null : caller.access.application.id,
          )
        : null;
      if (revoked === null)
        throw new ApiError(HttpStatus.NOT_FOUND, 'key_not_found', 'There is no such key.');
      await this.audit.record(manager, caller.actor, 'key.revoke', {
        keyId: revoked.id,
        applicationId: revoked.application.id,
      });
      return revoked;
    });
  }

  /** Audit events, newest first; an application key sees its own application's only. */
  async auditEvents(
    caller: Caller,
    filter: AuditFilter,
  ): Promise<{ events: AuditEvent[]; next: string | null }> {
    const applicationId = caller.access.root
      ? filter.application === undefined
        ? null
        : (await this.visibleApplication(caller, filter.application)).id
      : (await this.visibleApplication(caller, filter.application ?? caller.access.application.id)).id;
    const events = await this.audit.list({
      applicationId,
      profileId: filter.profile?.toLowerCase(),
      action: filter.action,
      since: filter.since === undefined ? undefined : new Date(filter.since),
      before: filter.cursor,
      limit: filter.limit + 1,
    });
    const page = events.slice(0, filter.limit);
    return { events: page, next: events.length > filter.limit ? page[page.length - 1].id : null };
  }

  /** The application named, when the caller may act in it: any for the root key, its own for an application key. */
  private async visibleApplication(caller: Caller, idOrName: string): Promise<StoredApplication> {
    const application = await this.applications.find(idOrName);
    if (application === null || (!caller.access.root && application.id !== caller.access.application.id)) {
      throw new ApiError(
        HttpStatus.NOT_FOUND,
        'application_not_found',
        `There is no application "${idOrName.slice(0, 80)}".`,
        'application',
      );
    }
    return application;
  }
}

function rootOnly(what: string): ApiError {
  return new ApiError(
    HttpStatus.FORBIDDEN,
    'insufficient_scope',
    `Only the service key (SERVICE_API_KEY) may ${what}.`,
  );
}
