import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { AuditEvent, AuditTrail } from '../access/audit-trail';
import { profileNotFound } from '../common/api-error';
import { HistoryEntry, ProfileHistory } from '../history/profile-history';
import { MemoryEntity } from '../memories/memory.entity';
import { LearningState, LearningStateReader } from '../messages/learning-state';
import { MessageEntity } from '../messages/message.entity';
import { ProfileEntity } from '../profiles/profile.entity';
import { PROFILE_ERASED, ProfileErasedEvent } from '../profiles/profile-events';
import { ProfilesService } from '../profiles/profiles.service';
import { TraitEntity } from '../traits/trait.entity';
import { TraitsRepository } from '../traits/traits.repository';
import type { ProfilePath } from '../profiles/profile-path';

export const RECENT_MEMORIES_IN_PROFILE = 10;

const NO_COUNTS: ProfileCounts = { traits: 0, memories: 0, messages: 0, pending: 0, failed: 0 };

export interface ProfileDetails {
  profile: ProfileEntity;
  traits: TraitEntity[];
  recentMemories: MemoryEntity[];
  learning: LearningState;
}

export interface ProfileExport {
  profile: ProfileEntity;
  traits: TraitEntity[];
  memories: MemoryEntity[];
  messages: MessageEntity[];
  /** Every change of the profile's memories and traits, oldest first. */
  history: HistoryEntry[];
  /** The audit events that name the profile (this export's too), oldest first. */
  audit: AuditEvent[];
  exportedAt: Date;
}

export interface DeletedCounts {
  traits: number;
  memories: number;
  messages: number;
}

/** What a profile holds, in numbers, and how far learning from it has got. */
export interface ProfileCounts extends DeletedCounts {
  /** Messages still to be learnt from. */
  pending: number;
  /** Messages extraction gave up on. */
  failed: number;
}

export interface CountedProfilePage {
  profiles: Array<{ profile: ProfileEntity; counts: ProfileCounts }>;
  total: number;
}

/**
 * Everything stored of one profile, read or erased as a whole: the profile with its traits and newest
 * memories, the export (data portability) and the erasure. An export and an erasure commit with their
 * audit events; an erased profile's events stay (they hold ids, no content).
 */
@Injectable()
export class ProfileDataService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: ProfilesService,
    private readonly history: ProfileHistory,
    private readonly events: EventEmitter2,
    private readonly traits: TraitsRepository,
    private readonly audit: AuditTrail,
    private readonly learning: LearningStateReader,
  ) {}

  /** A page of profiles of one application, each with its counts: two statements whatever the page's size. */
  async list(
    applicationId: string,
    query: { limit: number; offset: number; search?: string },
  ): Promise<CountedProfilePage> {
    const page = await this.profiles.list(applicationId, query);
    const counts = await this.countsOf(page.profiles.map((profile) => profile.id));
    return {
      profiles: page.profiles.map((profile) => ({ profile, counts: counts.get(profile.id) ?? NO_COUNTS })),
      total: page.total,
    };
  }

  private async countsOf(profileIds: string[]): Promise<Map<string, ProfileCounts>> {
    if (profileIds.length === 0) return new Map();
    const rows: Array<ProfileCounts & { id: string }> = await this.dataSource.query(
      `SELECT p.id,
              (SELECT count(*) FROM traits t WHERE t.profile_id = p.id)::int AS traits,
              (SELECT count(*) FROM memories m WHERE m.profile_id = p.id)::int AS memories,
              g.messages, g.pending, g.failed
       FROM unnest($1::uuid[]) AS p(id)
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS messages,
                count(*) FILTER (WHERE extracted_at IS NULL)::int AS pending,
                count(*) FILTER (WHERE extracted_at IS NOT NULL AND extraction_error IS NOT NULL
                                 AND NOT extraction_fell_back)::int AS failed
         FROM messages WHERE profile_id = p.id) g`,
      [profileIds],
    );
    return new Map(rows.map(({ id, ...counts }) => [id, counts]));
  }

  async details(pathId: ProfilePath): Promise<ProfileDetails> {
    const profile = await this.profiles.resolve(pathId);
    const traits = await this.traits.list(profile.id);
    const recentMemories = await this.dataSource.getRepository(MemoryEntity).find({
      where: { profileId: profile.id, supersededAt: IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: RECENT_MEMORIES_IN_PROFILE,
    });
    const learning = await this.learning.read(profile.id);
    return { profile, traits, recentMemories, learning };
  }

  /** Deletes the profile and everything of it, and says exactly how many rows of each kind went. */
  async delete(pathId: ProfilePath): Promise<DeletedCounts> {
    const profile = await this.profiles.resolve(pathId);
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
      await this.audit.record(manager, pathId.actor, 'profile.erase', { profileId: profile.id });
      return { traits, memories, messages };
    });
    const event: ProfileErasedEvent = { profileId: profile.id };
    this.events.emit(PROFILE_ERASED, event);
    return deleted;
  }

  async export(pathId: ProfilePath): Promise<ProfileExport> {
    const profile = await this.profiles.resolve(pathId);
    // One snapshot, so the parts of the export agree with each other.
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const traits = await this.traits.list(profile.id, manager);
      const memories = await manager.find(MemoryEntity, {
        where: { profileId: profile.id },
        order: { createdAt: 'ASC', id: 'ASC' },
      });
      const messages = await manager.find(MessageEntity, {
        where: { profileId: profile.id },
        order: { seq: 'ASC' },
      });
      const history = await this.history.all(manager, profile.id);
      await this.audit.record(manager, pathId.actor, 'profile.export', { profileId: profile.id });
      const audit = await this.audit.ofProfile(manager, profile.id);
      return { profile, traits, memories, messages, history, audit, exportedAt: new Date() };
    });
  }
}
