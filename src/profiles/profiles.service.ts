import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { profileNotFound } from '../common/api-error';
import { UUID_PATTERN } from '../common/iso';
import { MAX_EXTERNAL_ID_LENGTH } from './dto/profile-request.dto';
import { ProfileEntity } from './profile.entity';

export interface ProfilePage {
  profiles: ProfileEntity[];
  total: number;
}

/**
 * Profiles themselves: listing, creation by external id, resolving the id a path names, and the summary.
 * What a profile holds (traits, memories, messages) is read and erased whole by ProfileDataService.
 */
@Injectable()
export class ProfilesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get profiles() {
    return this.dataSource.getRepository(ProfileEntity);
  }

  async list(query: { limit: number; offset: number; search?: string }): Promise<ProfilePage> {
    const build = () => {
      const qb = this.profiles.createQueryBuilder('p');
      if (query.search) {
        qb.where(`p.external_id ILIKE '%' || :pattern || '%'`, { pattern: escapeLike(query.search) });
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

  /** The profile with this external id, created when missing; race-free under concurrent calls. */
  async getOrCreate(externalId: string): Promise<{ profile: ProfileEntity; created: boolean }> {
    const existing = await this.profiles.findOneBy({ externalId });
    if (existing) return { profile: existing, created: false };
    const rows: Array<ProfileRow & { created: boolean }> = await this.dataSource.query(
      `INSERT INTO profiles (external_id) VALUES ($1)
       ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
       RETURNING *, (xmax = 0) AS created`,
      [externalId],
    );
    const row = rows[0];
    return { profile: this.profiles.create(fromRow(row)), created: row.created };
  }

  /**
   * The profile a path id names: a UUID-shaped id is an internal id first and an external id second;
   * anything else is only an external id.
   */
  async resolve(pathId: string): Promise<ProfileEntity> {
    if (pathId.length === 0 || pathId.length > MAX_EXTERNAL_ID_LENGTH || pathId.includes('\u0000')) {
      throw profileNotFound(pathId);
    }
    const qb = this.profiles.createQueryBuilder('p');
    if (UUID_PATTERN.test(pathId)) {
      qb.where('p.id = :uuid OR p.external_id = :pathId', { uuid: pathId.toLowerCase(), pathId })
        .orderBy('(p.id = :uuid)', 'DESC')
        .limit(1);
    } else {
      qb.where('p.external_id = :pathId', { pathId });
    }
    const profile = await qb.getOne();
    if (!profile) throw profileNotFound(pathId);
    return profile;
  }

  /** Writes the summary by hand; an empty summary hands it back to automatic summarisation. */
  async updateSummary(pathId: string, summary: string): Promise<ProfileEntity> {
    const profile = await this.resolve(pathId);
    const rows: ProfileRow[][] = await this.dataSource.query(
      `UPDATE profiles
       SET summary = $2, summary_version = summary_version + 1, summary_updated_at = now(),
           summary_is_manual = ($2 <> ''), updated_at = now()
       WHERE id = $1 RETURNING *`,
      [profile.id, summary],
    );
    const row = rows[0]?.[0];
    if (!row) throw profileNotFound(pathId);
    return this.profiles.create(fromRow(row));
  }
}

interface ProfileRow {
  id: string;
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
