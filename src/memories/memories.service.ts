import { HttpStatus, Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError, profileNotFound, truncate } from '../common/api-error';
import { UUID_PATTERN } from '../common/iso';
import { storableUnitInterval } from '../common/stored-real';
import { inProfileWrite } from '../database/profile-write-lock';
import { factKindOfContent } from './fact-kinds';
import { memoryContentHash } from './memory-content';
import { HistoryEntry, HistorySource, NewHistoryEntry, ProfileHistory } from '../history/profile-history';
import { ProfilesService } from '../profiles/profiles.service';
import { MEMORIES_STORED, MemoriesStoredEvent } from './memory-events';
import { MemoryEntity, MemoryType } from './memory.entity';
import type { ProfilePath } from '../profiles/profile-path';
import { AuditTrail } from '../access/audit-trail';

export const DEFAULT_MEMORY_IMPORTANCE = 0.5;

export interface NewMemory {
  content: string;
  type: MemoryType;
  importance: number;
  sourceMessageIds?: string[];
  /**
   * The kind of single-valued fact it states (`location`, ...): it supersedes the current one of that
   * kind. Null for none; when left out, the kind is read from the content (factKindOfContent).
   */
  factKey?: string | null;
}

export interface MemoryChanges {
  content?: string;
  type?: MemoryType;
  importance?: number;
}

export interface StoredMemory {
  memory: MemoryEntity;
  created: boolean;
  /** The memories it replaced (single-valued facts of the same kind). */
  superseded: MemoryEntity[];
}

/** A memory's value as its history keeps it. */
function valueOf(memory: Pick<MemoryEntity, 'content' | 'type' | 'importance'>) {
  return { content: memory.content, type: memory.type, importance: memory.importance };
}

/** Links followed at most from a superseded memory to the current end of its chain. */
const MAX_CHAIN = 100;

/** PostgreSQL's unique_violation: another memory of the profile has this content. */
const UNIQUE_VIOLATION = '23505';

const RETURNED_COLUMNS = `id, profile_id, content, content_hash, type, importance, decay_factor, source_message_ids,
  created_at, last_accessed_at, superseded_by, superseded_at, confirmed_at, fact_key`;

@Injectable()
export class MemoriesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: ProfilesService,
    private readonly history: ProfileHistory,
    private readonly events: EventEmitter2,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * Current memories by `importance × decayFactor`, then newest first; superseded ones only with
   * `includeSuperseded`.
   */
  async list(
    profilePathId: ProfilePath,
    query: { type?: MemoryType; limit: number; offset?: number; includeSuperseded?: boolean },
  ): Promise<MemoryEntity[]> {
    const profile = await this.profiles.resolve(profilePathId);
    const qb = this.dataSource
      .getRepository(MemoryEntity)
      .createQueryBuilder('m')
      .where('m.profile_id = :profileId', { profileId: profile.id });
    if (query.type) qb.andWhere('m.type = :type', { type: query.type });
    if (!query.includeSuperseded) qb.andWhere('m.superseded_at IS NULL');
    return qb
      .orderBy('m.importance * m.decay_factor', 'DESC')
      .addOrderBy('m.created_at', 'DESC')
      .addOrderBy('m.id', 'DESC')
      .limit(query.limit)
      .offset(query.offset ?? 0)
      .getMany();
  }

  async get(profilePathId: ProfilePath, memoryId: string): Promise<MemoryEntity> {
    const profile = await this.profiles.resolve(profilePathId);
    return this.find(this.dataSource.manager, profile.id, memoryId);
  }

  /** Creates a memory by hand; see `remember` for what happens to a repeat. */
  async create(
    profilePathId: ProfilePath,
    memory: NewMemory,
    source: HistorySource = 'api',
  ): Promise<StoredMemory> {
    const profile = await this.profiles.resolve(profilePathId);
    const stored = await inProfileWrite(
      this.dataSource,
      profile.id,
      () => profileNotFound(profilePathId),
      this.audit.audited(
        profilePathId.actor,
        'memory.create',
        (stored: StoredMemory) => ({ profileId: profile.id, memoryId: stored.memory.id }),
        (manager) => this.remember(manager, profile.id, memory, source),
      ),
    );
    if (stored.created) this.announceStored(profile.id, [stored.memory]);
    return stored;
  }

  /** Changes a memory by hand; the change is recorded with the old and the new value. */
  async update(profilePathId: ProfilePath, memoryId: string, changes: MemoryChanges): Promise<MemoryEntity> {
    if (changes.content === undefined && changes.type === undefined && changes.importance === undefined) {
      throw new ApiError(
        HttpStatus.BAD_REQUEST,
        'empty_update',
        'Send content, type or importance to change.',
      );
    }
    const profile = await this.profiles.resolve(profilePathId);
    const gone = () => profileNotFound(profilePathId);
    const updated = await inProfileWrite(this.dataSource, profile.id, gone, async (manager) => {
      const current = await this.find(manager, profile.id, memoryId, { lock: true });
      await this.audit.record(manager, profilePathId.actor, 'memory.update', {
        profileId: profile.id,
        memoryId: current.id,
      });
      const next = {
        content: changes.content?.trim() ?? current.content,
        type: changes.type ?? current.type,
        importance: storableUnitInterval(changes.importance ?? current.importance),
      };
      const factKey = next.content === current.content ? current.factKey : factKindOfContent(next.content);
      const row = await this.rewrite(manager, profile.id, current.id, { ...next, factKey });
      if (row.content_hash !== current.contentHash) {
        // a vector belongs to the content it was made from: the new content is embedded anew (announced)
        await manager.query(`DELETE FROM memory_embeddings WHERE memory_id = $1`, [current.id]);
      }
      await this.history.record(manager, profile.id, [
        {
          subject: 'memory',
          subjectKey: current.id,
          change: 'updated',
          oldValue: valueOf(current),
          newValue: next,
          source: 'api',
        },
      ]);
      return toEntity(manager, row);
    });
    if (changes.content !== undefined) this.announceStored(profile.id, [updated]);
    return updated;
  }

  /** Tells the rest of the service (embeddings) about new memories, once they are committed. */
  announceStored(profileId: string, memories: readonly MemoryEntity[]): void {
    if (memories.length === 0) return;
    const event: MemoriesStoredEvent = { profileId, memoryIds: memories.map((memory) => memory.id) };
    this.events.emit(MEMORIES_STORED, event);
  }

  /**
   * Stores a memory unless the profile already has one with the same normalised content: a repeat
   * adds no row but reinforces the stored one (importance raised to the larger of the two, decay reset,
   * `confirmedAt` set). A memory with a `factKey` is the current fact of its kind: it supersedes the
   * profile's other current memory of that kind (kept, with `supersededBy`, never injected again). A
   * superseded memory said again is current again and supersedes what had replaced it (makeCurrent).
   * Every change is recorded in the history with its source.
   */
  async remember(
    manager: EntityManager,
    profileId: string,
    memory: NewMemory,
    source: HistorySource,
  ): Promise<StoredMemory> {
    const factKey = memory.factKey === undefined ? factKindOfContent(memory.content) : memory.factKey;
    const rows: Array<StoredMemoryRow & { created: boolean; was: StoredMemoryRow | null }> =
      await manager.query(
        `WITH previous AS (
         SELECT content, type, importance, superseded_by FROM memories WHERE profile_id = $1 AND content_hash = $3
       )
       INSERT INTO memories (profile_id, content, content_hash, type, importance, source_message_ids, fact_key)
       VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7)
       ON CONFLICT (profile_id, content_hash) DO UPDATE
         SET importance = GREATEST(memories.importance, EXCLUDED.importance),
             decay_factor = 1,
             confirmed_at = now(),
             fact_key = coalesce(EXCLUDED.fact_key, memories.fact_key),
             superseded_by = NULL,
             superseded_at = NULL,
             source_message_ids = ARRAY(
               SELECT DISTINCT unnest(memories.source_message_ids || EXCLUDED.source_message_ids))
       RETURNING ${RETURNED_COLUMNS}, (xmax = 0) AS created, (SELECT row_to_json(p) FROM previous p) AS was`,
        [
          profileId,
          memory.content.trim(),
          memoryContentHash(memory.content),
          memory.type,
          storableUnitInterval(memory.importance),
          memory.sourceMessageIds ?? [],
          factKey,
        ],
      );
    const row = rows[0];
    const stored = toEntity(manager, row);
    const change = { source, sourceMessageIds: memory.sourceMessageIds ?? [] };
    await this.history.record(manager, profileId, [
      {
        subject: 'memory',
        subjectKey: stored.id,
        change: row.created ? 'created' : 'reinforced',
        oldValue: row.created || !row.was ? null : valueOf(row.was),
        newValue: valueOf(stored),
        ...change,
      },
    ]);
    const superseded = await this.makeCurrent(
      manager,
      profileId,
      stored,
      row.was?.superseded_by ?? null,
      change,
    );
    return { memory: stored, created: row.created, superseded };
  }

  /**
   * After `current` was stored or said again: it supersedes the memory that had replaced it (the current
   * end of that chain), if it was superseded, and the other current memories of its fact kind; recorded.
   */
  private async makeCurrent(
    manager: EntityManager,
    profileId: string,
    current: MemoryEntity,
    replacedBy: string | null,
    change: { source: HistorySource; sourceMessageIds: readonly string[] },
  ): Promise<MemoryEntity[]> {
    const superseded: MemoryEntity[] = [];
    if (replacedBy !== null) {
      const [rows] = await manager.query<[StoredMemoryRow[], number]>(
        `WITH RECURSIVE chain (id, superseded_by, depth) AS (
           SELECT id, superseded_by, 0 FROM memories WHERE id = $2 AND profile_id = $1
           UNION ALL
           SELECT m.id, m.superseded_by, c.depth + 1 FROM memories m JOIN chain c ON m.id = c.superseded_by
           WHERE c.depth < ${MAX_CHAIN}
         )
         UPDATE memories SET superseded_by = $3, superseded_at = now()
         WHERE id IN (SELECT id FROM chain WHERE superseded_by IS NULL) AND id <> $3 AND profile_id = $1
           AND superseded_at IS NULL
         RETURNING ${RETURNED_COLUMNS}`,
        [profileId, replacedBy, current.id],
      );
      superseded.push(...rows.map((row) => toEntity(manager, row)));
    }
    if (current.factKey !== null) {
      superseded.push(...(await this.supersedeOthers(manager, profileId, current, current.factKey)));
    }
    await this.history.record(
      manager,
      profileId,
      superseded.map((old) => ({
        subject: 'memory' as const,
        subjectKey: old.id,
        change: 'superseded' as const,
        oldValue: valueOf(old),
        newValue: { supersededBy: current.id, content: current.content },
        ...change,
      })),
    );
    return superseded;
  }

  /**
   * Deletes a memory. The memories it had superseded are handed on (handOnSupersession), so that the
   * fact it replaced is current again. With `purge` its history goes too, but for one entry saying that
   * a purged memory existed, when and by whom (ProfileHistory.purge).
   */
  async delete(
    profilePathId: ProfilePath,
    memoryId: string,
    options: { purge?: boolean; source?: HistorySource } = {},
  ): Promise<void> {
    const source = options.source ?? 'api';
    const profile = await this.profiles.resolve(profilePathId);
    await inProfileWrite(
      this.dataSource,
      profile.id,
      () => profileNotFound(profilePathId),
      async (manager) => {
        const current = await this.find(manager, profile.id, memoryId, { lock: true });
        await this.handOnSupersession(manager, profile.id, current, source);
        await this.audit.record(
          manager,
          profilePathId.actor,
          options.purge ? 'memory.purge' : 'memory.delete',
          { profileId: profile.id, memoryId: current.id },
        );
        await manager.query(`DELETE FROM memories WHERE id = $1 AND profile_id = $2`, [
          current.id,
          profile.id,
        ]);
        if (options.purge) {
          await this.history.purge(manager, profile.id, 'memory', current.id, source);
          return;
        }
        await this.history.record(manager, profile.id, [
          {
            subject: 'memory',
            subjectKey: current.id,
            change: 'deleted',
            oldValue: valueOf(current),
            newValue: null,
            source,
          },
        ]);
      },
    );
  }

  /**
   * Before `gone` is deleted, the memories it superseded get its place: superseded by what superseded
   * it, else, when it was current, the newest of them is current again (`reverted`) and the others are
   * superseded by that one, unless another current memory states the same kind of fact, which then
   * supersedes them all. Recorded, so the history says where each one went.
   */
  private async handOnSupersession(
    manager: EntityManager,
    profileId: string,
    gone: MemoryEntity,
    source: HistorySource,
  ): Promise<void> {
    const predecessors = (
      await manager.query<StoredMemoryRow[]>(
        `SELECT ${RETURNED_COLUMNS} FROM memories WHERE profile_id = $1 AND superseded_by = $2
         ORDER BY superseded_at DESC, created_at DESC, id DESC FOR UPDATE`,
        [profileId, gone.id],
      )
    ).map((row) => toEntity(manager, row));
    if (predecessors.length === 0) return;
    let successor: MemoryEntity | null =
      gone.supersededBy === null ? null : await this.find(manager, profileId, gone.supersededBy);
    const entries: NewHistoryEntry[] = [];
    if (successor === null) {
      const heir = predecessors[0];
      successor =
        heir.factKey === null ? null : await this.currentOfKind(manager, profileId, heir.factKey, gone.id);
      if (successor === null) {
        await manager.query(`UPDATE memories SET superseded_by = NULL, superseded_at = NULL WHERE id = $1`, [
          heir.id,
        ]);
        entries.push({
          subject: 'memory',
          subjectKey: heir.id,
          change: 'reverted',
          oldValue: { supersededBy: gone.id },
          newValue: { supersededBy: null, reason: 'the memory that superseded it was deleted' },
          source,
        });
        predecessors.shift();
        successor = heir;
      }
    }
    if (predecessors.length > 0) {
      await manager.query(`UPDATE memories SET superseded_by = $2 WHERE id = ANY($1::uuid[])`, [
        predecessors.map((memory) => memory.id),
        successor.id,
      ]);
    }
    for (const memory of predecessors) {
      entries.push({
        subject: 'memory',
        subjectKey: memory.id,
        change: 'superseded',
        oldValue: { supersededBy: gone.id },
        newValue: {
          supersededBy: successor.id,
          content: successor.content,
          reason: 'the memory that superseded it was deleted',
        },
        source,
      });
    }
    await this.history.record(manager, profileId, entries);
  }

  /** The current memory of the profile that states this kind of fact, other than `except`. */
  private async currentOfKind(
    manager: EntityManager,
    profileId: string,
    factKey: string,
    except: string,
  ): Promise<MemoryEntity | null> {
    const rows: StoredMemoryRow[] = await manager.query(
      `SELECT ${RETURNED_COLUMNS} FROM memories
       WHERE profile_id = $1 AND fact_key = $2 AND superseded_at IS NULL AND id <> $3
       ORDER BY created_at DESC LIMIT 1`,
      [profileId, factKey, except],
    );
    return rows.length === 0 ? null : toEntity(manager, rows[0]);
  }

  /**
   * Reinforces a memory of the profile that an extractor says was said again: importance raised to the
   * larger of the two, decay reset, `confirmedAt` set, recorded; a superseded one is current again and
   * supersedes what had replaced it (makeCurrent). False (nothing done) for an id that is not a memory
   * of this profile.
   */
  async reinforce(
    manager: EntityManager,
    profileId: string,
    memoryId: string,
    importance: number,
    change: { source: HistorySource; sourceMessageIds: string[] },
  ): Promise<boolean> {
    if (!UUID_PATTERN.test(memoryId)) return false;
    const [rows] = await manager.query<
      [Array<StoredMemoryRow & { old_importance: number; old_superseded_by: string | null }>, number]
    >(
      `UPDATE memories m SET importance = GREATEST(m.importance, $3), decay_factor = 1, confirmed_at = now(),
         superseded_by = NULL, superseded_at = NULL,
         source_message_ids = ARRAY(SELECT DISTINCT unnest(m.source_message_ids || $4::uuid[]))
       FROM (SELECT id, importance AS old_importance, superseded_by AS old_superseded_by
             FROM memories WHERE id = $1 AND profile_id = $2) AS o
       WHERE m.id = o.id
       RETURNING ${RETURNED_COLUMNS.replace(/(^|,\s*)/g, '$1m.')}, o.old_importance, o.old_superseded_by`,
      [memoryId, profileId, storableUnitInterval(importance), change.sourceMessageIds],
    );
    if (rows.length === 0) return false;
    const row = rows[0];
    await this.history.record(manager, profileId, [
      {
        subject: 'memory',
        subjectKey: row.id,
        change: 'reinforced',
        oldValue: { content: row.content, type: row.type, importance: row.old_importance },
        newValue: { content: row.content, type: row.type, importance: row.importance },
        ...change,
      },
    ]);
    await this.makeCurrent(manager, profileId, toEntity(manager, row), row.old_superseded_by, change);
    return true;
  }

  /**
   * Marks a current memory of the profile superseded by `newer`, as an extractor asked, and records it.
   * An id that is not a current memory of this profile, or `newer` itself, is left alone.
   */
  async supersede(
    manager: EntityManager,
    profileId: string,
    memoryId: string,
    newer: MemoryEntity,
    change: { source: HistorySource; sourceMessageIds: string[] },
  ): Promise<void> {
    if (!UUID_PATTERN.test(memoryId) || memoryId.toLowerCase() === newer.id) return;
    const [rows] = await manager.query<[StoredMemoryRow[], number]>(
      `UPDATE memories SET superseded_by = $3, superseded_at = now()
       WHERE id = $1 AND profile_id = $2 AND superseded_at IS NULL
       RETURNING ${RETURNED_COLUMNS}`,
      [memoryId, profileId, newer.id],
    );
    await this.history.record(
      manager,
      profileId,
      rows.map((row) => ({
        subject: 'memory' as const,
        subjectKey: row.id,
        change: 'superseded' as const,
        oldValue: valueOf(row),
        newValue: { supersededBy: newer.id, content: newer.content },
        ...change,
      })),
    );
  }

  /** The changes of a memory, newest first; also of a deleted one, until its profile is deleted. */
  async historyOf(profilePathId: ProfilePath, memoryId: string): Promise<HistoryEntry[]> {
    const profile = await this.profiles.resolve(profilePathId);
    const entries = UUID_PATTERN.test(memoryId)
      ? await this.history.of(profile.id, 'memory', memoryId.toLowerCase())
      : [];
    if (entries.length === 0) throw memoryNotFound(memoryId);
    return entries;
  }

  /** Writes a memory's new value; another memory of the profile with that content is a 409. */
  private async rewrite(
    manager: EntityManager,
    profileId: string,
    memoryId: string,
    next: { content: string; type: MemoryType; importance: number; factKey: string | null },
  ): Promise<StoredMemoryRow> {
    try {
      // an UPDATE answers [rows, count] through TypeORM
      const [rows] = await manager.query<[StoredMemoryRow[], number]>(
        `UPDATE memories SET content = $3, content_hash = $4, type = $5, importance = $6, fact_key = $7
         WHERE id = $1 AND profile_id = $2 RETURNING ${RETURNED_COLUMNS}`,
        [
          memoryId,
          profileId,
          next.content,
          memoryContentHash(next.content),
          next.type,
          next.importance,
          next.factKey,
        ],
      );
      return rows[0];
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      throw new ApiError(
        HttpStatus.CONFLICT,
        'duplicate_memory',
        'The profile already has a memory with this content.',
        'content',
      );
    }
  }

  private async supersedeOthers(
    manager: EntityManager,
    profileId: string,
    current: MemoryEntity,
    factKey: string,
  ): Promise<MemoryEntity[]> {
    const [rows]: [StoredMemoryRow[], number] = await manager.query(
      `UPDATE memories SET superseded_by = $3, superseded_at = now()
       WHERE profile_id = $1 AND fact_key = $2 AND superseded_at IS NULL AND id <> $3
       RETURNING ${RETURNED_COLUMNS}`,
      [profileId, factKey, current.id],
    );
    return rows.map((row) => toEntity(manager, row));
  }

  /** The memory of this profile, else 404: an id of another profile's memory is not found here. */
  private async find(
    manager: EntityManager,
    profileId: string,
    memoryId: string,
    options: { lock?: boolean } = {},
  ): Promise<MemoryEntity> {
    if (!UUID_PATTERN.test(memoryId)) throw memoryNotFound(memoryId);
    const rows: StoredMemoryRow[] = await manager.query(
      `SELECT ${RETURNED_COLUMNS} FROM memories WHERE id = $1 AND profile_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
      [memoryId, profileId],
    );
    if (rows.length === 0) throw memoryNotFound(memoryId);
    return toEntity(manager, rows[0]);
  }
}

function memoryNotFound(memoryId: string): ApiError {
  return new ApiError(
    HttpStatus.NOT_FOUND,
    'memory_not_found',
    `Memory '${truncate(memoryId)}' does not exist in this profile.`,
  );
}

/** The columns `remember` and friends return, so that a stored memory needs no second read. */
interface StoredMemoryRow {
  id: string;
  profile_id: string;
  content: string;
  content_hash: string;
  type: MemoryType;
  importance: number;
  decay_factor: number;
  source_message_ids: string[];
  created_at: Date | string;
  last_accessed_at: Date | string | null;
  superseded_by: string | null;
  superseded_at: Date | string | null;
  confirmed_at: Date | string | null;
  fact_key: string | null;
}

const dateOrNull = (value: Date | string | null) => (value === null ? null : new Date(value));

function toEntity(manager: EntityManager, row: StoredMemoryRow): MemoryEntity {
  return manager.create(MemoryEntity, {
    id: row.id,
    profileId: row.profile_id,
    content: row.content,
    contentHash: row.content_hash,
    type: row.type,
    importance: row.importance,
    decayFactor: row.decay_factor,
    sourceMessageIds: row.source_message_ids,
    createdAt: new Date(row.created_at),
    lastAccessedAt: dateOrNull(row.last_accessed_at),
    supersededBy: row.superseded_by,
    supersededAt: dateOrNull(row.superseded_at),
    confirmedAt: dateOrNull(row.confirmed_at),
    factKey: row.fact_key,
  });
}
