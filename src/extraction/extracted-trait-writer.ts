import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { storableUnitInterval } from '../common/stored-real';
import { HistorySource, NewHistoryEntry, ProfileHistory } from '../history/profile-history';
import { TraitSchema } from '../traits/trait-schema';
import { StoredTrait, TraitsRepository } from '../traits/traits.repository';
import { ExtractedTrait } from './extraction-types';
import { planTraitWrite } from './trait-merge';

/** Namespace (first key) of the transaction lock that serialises the applies to one profile. */
export const APPLY_LOCK_NAMESPACE = 0x50_4d_53_01;

export interface WrittenTrait {
  key: string;
  value: unknown;
  confidence: number;
  action: 'create' | 'update';
}

/**
 * Writes extracted traits of one profile following `planTraitWrite`, inside the caller's transaction,
 * and records each change in the profile's history.
 */
@Injectable()
export class ExtractedTraitWriter {
  constructor(
    private readonly history: ProfileHistory,
    private readonly traits: TraitsRepository,
  ) {}

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
    const rows = await this.traits.lockMany(
      manager,
      profileId,
      wanted.map((trait) => trait.key),
    );
    const stored = new Map<string, StoredTrait>(rows.map((row) => [row.key, row]));

    const written: WrittenTrait[] = [];
    const changes: NewHistoryEntry[] = [];
    for (const trait of wanted) {
      const schema = schemasByKey.get(trait.key)!;
      const planned = planTraitWrite(stored.get(trait.key), trait, schema, sourceMessageIds);
      if (planned === null) continue;
      const plan = { ...planned, confidence: storableUnitInterval(planned.confidence) };
      const replaced = await this.traits.upsertExtracted(manager, {
        profileId,
        key: trait.key,
        value: plan.value,
        valueType: schema.valueType,
        category: schema.category,
        confidence: plan.confidence,
        sourceMessageIds: plan.sourceMessageIds,
      });
      // a trait made manual after the read above (a PUT that won the race) stays as it is
      if (!replaced) continue;
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
