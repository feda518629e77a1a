import { HttpStatus, Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError, truncate } from '../common/api-error';
import { UUID_PATTERN } from '../common/iso';
import { memoryContentHash } from '../extraction/memory-content';
import { ProfilesService } from '../profiles/profiles.service';
import { MEMORIES_STORED, MemoriesStoredEvent } from './memory-events';
import { MemoryEntity, MemoryType } from './memory.entity';

export const DEFAULT_MEMORY_IMPORTANCE = 0.5;

export interface NewMemory {
  content: string;
  type: MemoryType;
  importance: number;
  sourceMessageIds?: string[];
}

@Injectable()
export class MemoriesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: ProfilesService,
    private readonly events: EventEmitter2,
  ) {}

  /** Memories by `importance × decayFactor`, then newest first. */
  async list(profilePathId: string, query: { type?: MemoryType; limit: number }): Promise<MemoryEntity[]> {
    const profile = await this.profiles.resolve(profilePathId);
    const qb = this.dataSource
      .getRepository(MemoryEntity)
      .createQueryBuilder('m')
      .where('m.profile_id = :profileId', { profileId: profile.id });
    if (query.type) qb.andWhere('m.type = :type', { type: query.type });
    return qb
      .orderBy('m.importance * m.decay_factor', 'DESC')
      .addOrderBy('m.created_at', 'DESC')
      .addOrderBy('m.id', 'DESC')
      .limit(query.limit)
      .getMany();
  }

  /** Creates a memory by hand; see `remember` for what happens to a repeat. */
  async create(
    profilePathId: string,
    memory: NewMemory,
  ): Promise<{ memory: MemoryEntity; created: boolean }> {
    const profile = await this.profiles.resolve(profilePathId);
    const stored = await this.remember(this.dataSource.manager, profile.id, memory);
    if (stored.created) this.announceStored(profile.id, [stored.memory]);
    return stored;
  }

  /** Tells the rest of the service (embeddings) about new memories, once they are committed. */
  announceStored(profileId: string, memories: readonly MemoryEntity[]): void {
    if (memories.length === 0) return;
    const event: MemoriesStoredEvent = { profileId, memoryIds: memories.map((memory) => memory.id) };
    this.events.emit(MEMORIES_STORED, event);
  }

  /**
   * Stores a memory unless the profile already has one with the same normalised content; a repeat does
   * not add a row but raises the stored importance to the larger of the two and refreshes its decay.
   */
  async remember(
    manager: EntityManager,
    profileId: string,
    memory: NewMemory,
  ): Promise<{ memory: MemoryEntity; created: boolean }> {
    const rows: Array<StoredMemoryRow & { created: boolean }> = await manager.query(
      `INSERT INTO memories (profile_id, content, content_hash, type, importance, source_message_ids)
       VALUES ($1, $2, $3, $4, $5, $6::uuid[])
       ON CONFLICT (profile_id, content_hash) DO UPDATE
         SET importance = GREATEST(memories.importance, EXCLUDED.importance),
             decay_factor = 1,
             source_message_ids = ARRAY(
               SELECT DISTINCT unnest(memories.source_message_ids || EXCLUDED.source_message_ids))
       RETURNING id, profile_id, content, content_hash, type, importance, decay_factor, source_message_ids,
                 created_at, last_accessed_at, (xmax = 0) AS created`,
      [
        profileId,
        memory.content.trim(),
        memoryContentHash(memory.content),
        memory.type,
        memory.importance,
        memory.sourceMessageIds ?? [],
      ],
    );
    const row = rows[0];
    const stored = manager.create(MemoryEntity, {
      id: row.id,
      profileId: row.profile_id,
      content: row.content,
      contentHash: row.content_hash,
      type: row.type,
      importance: row.importance,
      decayFactor: row.decay_factor,
      sourceMessageIds: row.source_message_ids,
      createdAt: row.created_at,
      lastAccessedAt: row.last_accessed_at,
    });
    return { memory: stored, created: row.created };
  }

  async delete(profilePathId: string, memoryId: string): Promise<void> {
    const profile = await this.profiles.resolve(profilePathId);
    const notFound = new ApiError(
      HttpStatus.NOT_FOUND,
      'memory_not_found',
      `Memory '${truncate(memoryId)}' does not exist in this profile.`,
    );
    if (!UUID_PATTERN.test(memoryId)) throw notFound;
    const result = await this.dataSource
      .getRepository(MemoryEntity)
      .delete({ id: memoryId, profileId: profile.id });
    if (!result.affected) throw notFound;
  }
}

/** The columns `remember` returns, so that the stored memory needs no second read. */
interface StoredMemoryRow {
  id: string;
  profile_id: string;
  content: string;
  content_hash: string;
  type: MemoryType;
  importance: number;
  decay_factor: number;
  source_message_ids: string[];
  created_at: Date;
  last_accessed_at: Date | null;
}
