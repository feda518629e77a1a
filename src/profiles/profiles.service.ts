import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { profileNotFound } from '../common/api-error';
import { UUID_PATTERN } from '../common/iso';
import { HistoryEntry, ProfileHistory } from '../history/profile-history';
import { MemoryEntity } from '../memories/memory.entity';
import { MessageEntity } from '../messages/message.entity';
import { TraitEntity } from '../traits/trait.entity';
import { MAX_EXTERNAL_ID_LENGTH } from './dto/profile-request.dto';
import { ProfileEntity } from './profile.entity';
import { PROFILE_ERASED, ProfileErasedEvent } from './profile-events';

export const RECENT_MEMORIES_IN_PROFILE = 10;

export interface ProfilePage {
  profiles: ProfileEntity[];
  total: number;
}

export interface ProfileDetails {
  profile: ProfileEntity;
  traits: TraitEntity[];
  recentMemories: MemoryEntity[];
}

export interface ProfileExport {
  profile: ProfileEntity;
  traits: TraitEntity[];
  memories: MemoryEntity[];
  messages: MessageEntity[];
  /** Every change of the profile's memories and traits, oldest first. */
  history: HistoryEntry[];
  exportedAt: Date;
}

export interface DeletedCounts {
  traits: number;
  memories: number;
  messages: number;
}

@Injectable()
export class ProfilesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly history: ProfileHistory,
    private readonly events: EventEmitter2,
  ) {}

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

  async details(pathId: string): Promise<ProfileDetails> {
    const profile = await this.resolve(pathId);
    const traits = await this.dataSource
      .getRepository(TraitEntity)
      .find({ where: { profileId: profile.id }, order: { key: 'ASC' } });
    const recentMemories = await this.dataSource.getRepository(MemoryEntity).find({
      where: { profileId: profile.id, supersededAt: IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: RECENT_MEMORIES_IN_PROFILE,
    });
    return { profile, traits, recentMemories };
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

  /** Deletes the profile and everything of it, and says exactly how many rows of each kind went. */
  async delete(pathId: string): Promise<DeletedCounts> {
    const profile = await this.resolve(pathId);
    const deleted = await this.dataSource.transaction(async (manager) => {
      // Locking the row first makes concurrent inserts of its children wait and then fail, so the
      // counts below are all that ever existed.
      const locked: unknown[] = await manager.query(`SELECT id FROM profiles WHERE id = $1 FOR UPDATE`, [
        profile.id,
      ]);
      if (locked.length === 0) throw profileNotFound(pathId);
      const rows: Array<{ traits: number; memories: number; messages: number }> = await manager.query(
        `WITH t AS (DELETE FROM traits WHERE profile_id = $1 RETURNING 1),
              m AS (DELETE FROM memories WHERE profile_id = $1 RETURNING 1),
              g AS (DELETE FROM messages WHERE profile_id = $1 RETURNING 1),
              p AS (DELETE FROM profiles WHERE id = $1 RETURNING 1)
         SELECT (SELECT count(*) FROM t)::int AS traits,
                (SELECT count(*) FROM m)::int AS memories,
                (SELECT count(*) FROM g)::int AS messages,
                (SELECT count(*) FROM p)::int AS profiles`,
        [profile.id],
      );
      const { traits, memories, messages } = rows[0];
      return { traits, memories, messages };
    });
    const event: ProfileErasedEvent = { profileId: profile.id };
    this.events.emit(PROFILE_ERASED, event);
    return deleted;
  }

  async export(pathId: string): Promise<ProfileExport> {
    const profile = await this.resolve(pathId);
    // One snapshot, so the parts of the export agree with each other.
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const traits = await manager.find(TraitEntity, {
        where: { profileId: profile.id },
        order: { key: 'ASC' },
      });
      const memories = await manager.find(MemoryEntity, {
        where: { profileId: profile.id },
        order: { createdAt: 'ASC', id: 'ASC' },
      });
      const messages = await manager.find(MessageEntity, {
        where: { profileId: profile.id },
        order: { seq: 'ASC' },
      });
      const history = await this.history.all(manager, profile.id);
      return { profile, traits, memories, messages, history, exportedAt: new Date() };
    });
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
