import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { TraitEntity } from './trait.entity';

/** A trait's value as the history records it. */
export interface TraitValue {
  value: unknown;
  confidence: number;
}

/** A stored trait as extraction merges into it. */
export interface StoredTrait extends TraitValue {
  source: 'extracted' | 'manual';
  sourceMessageIds: string[];
}

/** What an upsert sets; the value is stored as JSON. */
export interface TraitUpsert {
  profileId: string;
  key: string;
  value: unknown;
  valueType: string;
  category: string;
  confidence: number;
}

/**
 * The SQL of the traits table, for the API (manual writes) and extraction alike. The methods that take
 * an EntityManager run in the caller's transaction; the locking reads hold their rows until it ends.
 */
@Injectable()
export class TraitsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A profile's traits, by key. */
  list(profileId: string, manager: EntityManager = this.dataSource.manager): Promise<TraitEntity[]> {
    return manager.find(TraitEntity, { where: { profileId }, order: { key: 'ASC' } });
  }

  findOne(manager: EntityManager, profileId: string, id: string): Promise<TraitEntity> {
    return manager.getRepository(TraitEntity).findOneByOrFail({ id, profileId });
  }

  /** The trait's value, its row locked (so that the value recorded as the old one is the one replaced). */
  async lockOne(manager: EntityManager, profileId: string, key: string): Promise<TraitValue | null> {
    const rows: TraitValue[] = await manager.query(
      `SELECT value, confidence FROM traits WHERE profile_id = $1 AND key = $2 FOR UPDATE`,
      [profileId, key],
    );
    return rows[0] ?? null;
  }

  /** The stored traits of these keys, their rows locked. */
  async lockMany(
    manager: EntityManager,
    profileId: string,
    keys: string[],
  ): Promise<Array<StoredTrait & { key: string }>> {
    const rows: Array<
      TraitValue & { key: string; source: StoredTrait['source']; source_message_ids: string[] }
    > = await manager.query(
      `SELECT key, value, confidence, source, source_message_ids FROM traits
         WHERE profile_id = $1 AND key = ANY($2::text[]) FOR UPDATE`,
      [profileId, keys],
    );
    return rows.map((row) => ({
      key: row.key,
      value: row.value,
      confidence: row.confidence,
      source: row.source,
      sourceMessageIds: row.source_message_ids,
    }));
  }

  /** Creates or replaces the trait as `manual` (which extraction never overwrites); returns its id. */
  async upsertManual(manager: EntityManager, trait: TraitUpsert): Promise<string> {
    const [{ id }]: Array<{ id: string }> = await manager.query(
      `INSERT INTO traits (profile_id, key, value, value_type, category, confidence, source)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, 'manual')
       ON CONFLICT (profile_id, key) DO UPDATE
         SET value = EXCLUDED.value, value_type = EXCLUDED.value_type, category = EXCLUDED.category,
             confidence = EXCLUDED.confidence, source = 'manual', source_message_ids = '{}', updated_at = now()
       RETURNING id`,
      writeParameters(trait),
    );
    return id;
  }

  /**
   * Creates or replaces the trait as `extracted`, unless it is manual: also one made manual after the
   * caller's read (a PUT that won the race). Says whether it was written.
   */
  async upsertExtracted(
    manager: EntityManager,
    trait: TraitUpsert & { sourceMessageIds: string[] },
  ): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO traits (profile_id, key, value, value_type, category, confidence, source, source_message_ids)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, 'extracted', $7::uuid[])
       ON CONFLICT (profile_id, key) DO UPDATE
         SET value = EXCLUDED.value, value_type = EXCLUDED.value_type, category = EXCLUDED.category,
             confidence = EXCLUDED.confidence, source_message_ids = EXCLUDED.source_message_ids,
             updated_at = now()
         WHERE traits.source = 'extracted'
       RETURNING id`,
      [...writeParameters(trait), trait.sourceMessageIds],
    );
    return rows.length > 0;
  }

  /** Deletes the trait; returns what it held, or null when there was none. */
  async delete(manager: EntityManager, profileId: string, key: string): Promise<TraitValue | null> {
    // an UPDATE or DELETE answers [rows, count] through TypeORM
    const [rows]: [TraitValue[], number] = await manager.query(
      `DELETE FROM traits WHERE profile_id = $1 AND key = $2 RETURNING value, confidence`,
      [profileId, key],
    );
    return rows[0] ?? null;
  }

  /** A profile's keys and values, by key. */
  keyValues(
    profileId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Array<{ key: string; value: unknown }>> {
    return manager.query(`SELECT key, value FROM traits WHERE profile_id = $1 ORDER BY key`, [profileId]);
  }
}

function writeParameters(trait: TraitUpsert): unknown[] {
  return [
    trait.profileId,
    trait.key,
    JSON.stringify(trait.value),
    trait.valueType,
    trait.category,
    trait.confidence,
  ];
}
