import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { storableUnitInterval } from '../common/stored-real';
import { HistorySource, NewHistoryEntry, ProfileHistory } from '../history/profile-history';
import { TraitSchema } from '../traits/trait-schema';
import { ExtractedTrait } from './extraction-types';
import { planTraitWrite, StoredTrait } from './trait-merge';

/** Namespace (first key) of the transaction lock that serialises the applies to one profile. */
export const APPLY_LOCK_NAMESPACE = 0x50_4d_53_01;

export interface WrittenTrait {
  key: string;
  value: unknown;
  confidence: number;
  action: 'create' | 'update';
}

interface StoredRow {
  key: string;
  value: unknown;
  confidence: number;
  source: 'extracted' | 'manual';
  source_message_ids: string[];
}

/**
 * Writes extracted traits of one profile following `planTraitWrite`, inside the caller's transaction,
 * and records each change in the profile's history.
 */
@Injectable()
export class ExtractedTraitWriter {
  constructor(private readonly history: ProfileHistory) {}

  async write(
    manager: EntityManager,
    profileId: string,
    traits: ExtractedTrait[],
    schemas: readonly TraitSchema[],
    sourceMessageIds: string[],
    source: HistorySource,
  ): Promise<WrittenTrait[]> {
    // Two applies to one profile (ingest and a worker, two instances) would each merge a list trait
    // with what they read; taking turns makes every merge see the one before.
    await manager.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [APPLY_LOCK_NAMESPACE, profileId]);
    const schemasByKey = new Map(schemas.map((schema) => [schema.key, schema]));
    const wanted = traits.filter((trait) => schemasByKey.has(trait.key));
    if (wanted.length === 0) return [];
    const rows: StoredRow[] = await manager.query(
      `SELECT key, value, confidence, source, source_message_ids FROM traits
       WHERE profile_id = $1 AND key = ANY($2::text[]) FOR UPDATE`,
      [profileId, wanted.map((trait) => trait.key)],
    );
    const stored = new Map<string, StoredTrait>(
      rows.map((row) => [
        row.key,
        {
          value: row.value,
          confidence: row.confidence,
          source: row.source,
          sourceMessageIds: row.source_message_ids,
        },
      ]),
    );

    const written: WrittenTrait[] = [];
    const changes: NewHistoryEntry[] = [];
    for (const trait of wanted) {
      const schema = schemasByKey.get(trait.key)!;
      const planned = planTraitWrite(stored.get(trait.key), trait, schema, sourceMessageIds);
      if (planned === null) continue;
      const plan = { ...planned, confidence: storableUnitInterval(planned.confidence) };
      // The WHERE keeps a trait that was made manual after the read above (a PUT that won the race).
      const upserted: unknown[] = await manager.query(
        `INSERT INTO traits (profile_id, key, value, value_type, category, confidence, source, source_message_ids)
         VALUES ($1, $2, $3::jsonb, $4, $5, $6, 'extracted', $7::uuid[])
         ON CONFLICT (profile_id, key) DO UPDATE
           SET value = EXCLUDED.value, value_type = EXCLUDED.value_type, category = EXCLUDED.category,
               confidence = EXCLUDED.confidence, source_message_ids = EXCLUDED.source_message_ids,
               updated_at = now()
           WHERE traits.source = 'extracted'
         RETURNING id`,
        [
          profileId,
          trait.key,
          JSON.stringify(plan.value),
          schema.valueType,
          schema.category,
          plan.confidence,
          plan.sourceMessageIds,
        ],
      );
      if (upserted.length === 0) continue;
      written.push({ key: trait.key, value: plan.value, confidence: plan.confidence, action: plan.action });
      const before = stored.get(trait.key);
      changes.push({
        subject: 'trait',
        subjectKey: trait.key,
        change: plan.action === 'create' ? 'created' : 'updated',
        oldValue: before ? { value: before.value, confidence: before.confidence } : null,
        newValue: { value: plan.value, confidence: plan.confidence },
        source,
        sourceMessageIds,
      });
    }
    await this.history.record(manager, profileId, changes);
    return written;
  }
}
