import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditTrail } from '../access/audit-trail';
import { profileNotFound } from '../common/api-error';
import { UUID_PATTERN } from '../common/iso';
import type { Actor } from '../common/request-access';
import { MAX_EXTERNAL_ID_LENGTH } from './dto/profile-request.dto';
import { ProfileEntity } from './profile.entity';
import type { ProfilePath } from './profile-path';

export interface ProfilePage {
  profiles: ProfileEntity[];
  total: number;
}

/**
 * Profiles themselves: listing, creation by external id, resolving the id a path names, and the summary.
 * What a profile holds (traits, memories, messages) is read and erased whole by ProfileDataService.
 * Every profile belongs to an application, and every way to a profile goes through an application: a
 * user id is unique within its application, and another application's profile is not found.
 */
@Injectable()
export class ProfilesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditTrail,
  ) {}

  private get profiles() {
    return this.dataSource.getRepository(ProfileEntity);
  }

  async list(
    applicationId: string,
    query: { limit: number; offset: number; search?: string },
  ): Promise<ProfilePage> {
    const build = () => {
      const qb = this.profiles
        .createQueryBuilder('p')
        .where('p.application_id = :applicationId', { applicationId });
      if (query.search) {
        qb.andWhere(`p.external_id ILIKE '%' || :pattern || '%'`, { pattern: escapeLike(query.search) });
      }
      return qb;
    };
    const profiles = await build()
      .orderBy('p.created_at', 'DESC')
      .addOrderBy('p.id', 'DESC')
      .limit(query.limit)
      .offset(query.offset)
      .getMany();
    const total = await build().getCount();
    return { profiles, total };
  }

  /**
   * The profile with this external id in the application, created when missing; race-free under
   * concurrent calls. With an actor, a creation is recorded in the audit trail in its transaction.
   */
  async getOrCreate(
    applicationId: string,
    externalId: string,
    actor: Actor | null = null,
  ): Promise<{ profile: ProfileEntity; created: boolean }> {
    const existing = await this.profiles.findOneBy({ applicationId, externalId });
    if (existing) return { profile: existing, created: false };
    const insert = async (manager: EntityManager) => {
      const rows: Array<ProfileRow & { created: boolean }> = await manager.query(
        `INSERT INTO profiles (application_id, external_id) VALUES ($1, $2)
         ON CONFLICT (application_id, external_id) DO UPDATE SET external_id = EXCLUDED.external_id
         RETURNING *, (xmax = 0) AS created`,
        [applicationId, externalId],
      );
      const row = rows[0];
      if (actor !== null && row.created) {
        await this.audit.record(manager, actor, 'profile.create', { profileId: row.id });
      }
      return { profile: this.profiles.create(fromRow(row)), created: row.created };
    };
    return actor === null ? insert(this.dataSource.manager) : this.dataSource.transaction(insert);
  }

  /**
   * The profile a path id names: a UUID-shaped id is an internal id first and an external id second;
   * anything else is only an external id.
   */
  async resolve(path: ProfilePath): Promise<ProfileEntity> {
    const { pathId, applicationId } = path;
    if (pathId.length === 0 || pathId.length > MAX_EXTERNAL_ID_LENGTH || pathId.includes('\u0000')) {
      throw profileNotFound(pathId);
    }
    const qb = this.profiles
      .createQueryBuilder('p')
      .where('p.application_id = :applicationId', { applicationId });
    if (UUID_PATTERN.test(pathId)) {
      qb.andWhere('(p.id = :uuid OR p.external_id = :pathId)', { uuid: pathId.toLowerCase(), pathId })
        .orderBy('(p.id = :uuid)', 'DESC')
        .limit(1);
    } else {
      qb.andWhere('p.external_id = :pathId', { pathId });
    }
    const profile = await qb.getOne();
    if (!profile) throw profileNotFound(pathId);
    return profile;
  }

  /** Writes the summary by hand; an empty summary hands it back to automatic summarisation. */
  async updateSummary(path: ProfilePath, summary: string): Promise<ProfileEntity> {
    const profile = await this.resolve(path);
    return this.dataSource.transaction(async (manager) => {
      const rows: ProfileRow[][] = await manager.query(
        `UPDATE profiles
         SET summary = $2, summary_version = summary_version + 1, summary_updated_at = now(),
             summary_is_manual = ($2 <> ''), updated_at = now()
         WHERE id = $1 RETURNING *`,
        [profile.id, summary],
      );
      const row = rows[0]?.[0];
      if (!row) throw profileNotFound(path);
      await this.audit.record(manager, path.actor, 'profile.update', { profileId: row.id });
      return this.profiles.create(fromRow(row));
    });
  }
}

interface ProfileRow {
  id: string;
  application_id: string;
  external_id: string | null;
  summary: string;
  summary_version: number;
  summary_updated_at: Date | null;
  summary_is_manual: boolean;
  created_at: Date;
  updated_at: Date;
}

function fromRow(row: ProfileRow): Partial<ProfileEntity> {
  return {
    id: row.id,
    applicationId: row.application_id,
    externalId: row.external_id,
    summary: row.summary,
    summaryVersion: row.summary_version,
    summaryUpdatedAt: row.summary_updated_at,
    summaryIsManual: row.summary_is_manual,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
