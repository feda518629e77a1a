import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

export type HistorySubject = 'memory' | 'trait';
export type HistoryChange =
  'created' | 'updated' | 'superseded' | 'reinforced' | 'deleted' | 'reverted' | 'purged';
/** Who made a change: the management API, the MCP tools, background extraction of chats, or ingest. */
export type HistorySource = 'api' | 'mcp' | 'extraction' | 'ingest';

export interface NewHistoryEntry {
  subject: HistorySubject;
  /** The memory's id, or the trait's key. */
  subjectKey: string;
  change: HistoryChange;
  oldValue: unknown;
  newValue: unknown;
  source: HistorySource;
  sourceMessageIds?: readonly string[];
}

export interface HistoryEntry extends NewHistoryEntry {
  id: string;
  sourceMessageIds: string[];
  createdAt: Date;
}

interface HistoryRow {
  id: string;
  subject: HistorySubject;
  subject_key: string;
  change: HistoryChange;
  old_value: unknown;
  new_value: unknown;
  source: HistorySource;
  source_message_ids: string[];
  created_at: Date | string;
}

const COLUMNS = `id, subject, subject_key, change, old_value, new_value, source, source_message_ids, created_at`;

/**
 * Called within the transaction of a change that takes stored content out of what is current (a
 * deletion, an edit, a supersession, a revert), so that text repeating that content follows it.
 */
export type ContentReplacedHook = (manager: EntityManager, profileId: string) => Promise<void>;

/** The changes after which an old value may no longer be current. */
const REPLACING_CHANGES: ReadonlySet<HistoryChange> = new Set<HistoryChange>([
  'updated',
  'superseded',
  'deleted',
  'reverted',
  'purged',
]);

/**
 * Every change of a profile's memories and traits, in `profile_history`: written in the transaction of
 * the change itself, kept after the memory or trait is gone, removed with the profile. Every write of a
 * memory or trait records its change here, so this is also where what derives from them (the automatic
 * summary) hears, in the same transaction, that an old value is gone.
 */
@Injectable()
export class ProfileHistory {
  private readonly contentReplacedHooks: ContentReplacedHook[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Registers a hook run in the transaction of every change that replaces or removes a value. */
  onContentReplaced(hook: ContentReplacedHook): void {
    this.contentReplacedHooks.push(hook);
  }

  /**
   * Records changes within the caller's transaction, in their order, with one statement; then, when one
   * of them replaced or removed a value, runs the content-replaced hooks in the same transaction.
   */
  async record(
    manager: EntityManager,
    profileId: string,
    entries: readonly NewHistoryEntry[],
  ): Promise<void> {
    if (entries.length === 0) return;
    await this.insert(manager, profileId, entries);
    if (entries.some((entry) => REPLACING_CHANGES.has(entry.change))) {
      for (const hook of this.contentReplacedHooks) await hook(manager, profileId);
    }
  }

  private async insert(
    manager: EntityManager,
    profileId: string,
    entries: readonly NewHistoryEntry[],
  ): Promise<void> {
    await manager.query(
      `INSERT INTO profile_history
         (profile_id, subject, subject_key, change, old_value, new_value, source, source_message_ids)
       SELECT $1, e.item->>'subject', e.item->>'subject_key', e.item->>'change', e.item->'old_value',
              e.item->'new_value', e.item->>'source',
              ARRAY(SELECT jsonb_array_elements_text(e.item->'source_message_ids'))::uuid[]
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e (item, n)
       ORDER BY e.n`,
      [
        profileId,
        JSON.stringify(
          entries.map((entry) => ({
            subject: entry.subject,
            subject_key: entry.subjectKey,
            change: entry.change,
            old_value: entry.oldValue ?? null,
            new_value: entry.newValue ?? null,
            source: entry.source,
            source_message_ids: entry.sourceMessageIds ?? [],
          })),
        ),
      ],
    );
  }

  /**
   * Removes what the history holds of a memory's or trait's values: its own entries go, for one
   * `purged` entry (that it existed, when, by whom); other memories' entries naming it as what
   * superseded them lose its content. Within the caller's transaction, after the item is deleted.
   */
  async purge(
    manager: EntityManager,
    profileId: string,
    subject: HistorySubject,
    subjectKey: string,
    source: HistorySource,
  ): Promise<void> {
    await manager.query(
      `DELETE FROM profile_history WHERE profile_id = $1 AND subject = $2 AND subject_key = $3`,
      [profileId, subject, subjectKey],
    );
    if (subject === 'memory') {
      await manager.query(
        `UPDATE profile_history SET new_value = new_value - 'content'
         WHERE profile_id = $1 AND subject = 'memory' AND jsonb_typeof(new_value) = 'object'
           AND new_value->>'supersededBy' = $2`,
        [profileId, subjectKey],
      );
    }
    await this.record(manager, profileId, [
      { subject, subjectKey, change: 'purged', oldValue: null, newValue: null, source },
    ]);
  }

  /** The changes of one memory or trait, newest first. */
  async of(profileId: string, subject: HistorySubject, subjectKey: string): Promise<HistoryEntry[]> {
    const rows: HistoryRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM profile_history
       WHERE profile_id = $1 AND subject = $2 AND subject_key = $3 ORDER BY seq DESC`,
      [profileId, subject, subjectKey],
    );
    return rows.map(toEntry);
  }

  /** Every change of the profile, oldest first (the export). */
  async all(manager: EntityManager, profileId: string): Promise<HistoryEntry[]> {
    const rows: HistoryRow[] = await manager.query(
      `SELECT ${COLUMNS} FROM profile_history WHERE profile_id = $1 ORDER BY seq`,
      [profileId],
    );
    return rows.map(toEntry);
  }
}

function toEntry(row: HistoryRow): HistoryEntry {
  return {
    id: row.id,
    subject: row.subject,
    subjectKey: row.subject_key,
    change: row.change,
    oldValue: row.old_value,
    newValue: row.new_value,
    source: row.source,
    sourceMessageIds: row.source_message_ids,
    createdAt: new Date(row.created_at),
  };
}
