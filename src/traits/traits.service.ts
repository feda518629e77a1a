import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError, invalidField, profileNotFound, truncate } from '../common/api-error';
import { HistoryEntry, HistorySource, ProfileHistory } from '../history/profile-history';
import { storableUnitInterval } from '../common/stored-real';
import { inProfileWrite } from '../database/profile-write-lock';
import { ProfilesService } from '../profiles/profiles.service';
import { TRAIT_KEY_PATTERN } from './trait-schema';
import { TraitSchemaRegistry } from './trait-schema-registry';
import { TraitEntity } from './trait.entity';
import { checkTraitValue, inferValueType } from './trait-value';
import { TraitsRepository } from './traits.repository';
import type { ProfilePath } from '../profiles/profile-path';
import { AuditTrail } from '../access/audit-trail';

export const CUSTOM_TRAIT_CATEGORY = 'custom';

@Injectable()
export class TraitsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: ProfilesService,
    private readonly schemas: TraitSchemaRegistry,
    private readonly history: ProfileHistory,
    private readonly traits: TraitsRepository,
    private readonly audit: AuditTrail,
  ) {}

  async list(profilePathId: ProfilePath): Promise<TraitEntity[]> {
    const profile = await this.profiles.resolve(profilePathId);
    return this.traits.list(profile.id);
  }

  /** Creates or replaces a trait by hand: source `manual`, which extraction never overwrites. */
  async putManual(
    profilePathId: ProfilePath,
    key: string,
    value: unknown,
    confidence = 1,
    source: HistorySource = 'api',
  ): Promise<TraitEntity> {
    assertTraitKey(key);
    const profile = await this.profiles.resolve(profilePathId);
    return inProfileWrite(
      this.dataSource,
      profile.id,
      () => profileNotFound(profilePathId),
      this.audit.audited(
        profilePathId.actor,
        'trait.put',
        () => ({ profileId: profile.id, traitKey: key }),
        (manager) => this.writeManual(manager, profile.id, key, value, confidence, null, source),
      ),
    );
  }

  /** Deletes a trait; with `purge` its history too, but for one `purged` entry (ProfileHistory.purge). */
  async delete(
    profilePathId: ProfilePath,
    key: string,
    options: { purge?: boolean; source?: HistorySource } = {},
  ): Promise<void> {
    const source = options.source ?? 'api';
    assertTraitKey(key);
    const profile = await this.profiles.resolve(profilePathId);
    await inProfileWrite(
      this.dataSource,
      profile.id,
      () => profileNotFound(profilePathId),
      async (manager) => {
        const deleted = await this.traits.delete(manager, profile.id, key);
        if (!deleted) throw traitNotFound(key);
        await this.audit.record(
          manager,
          profilePathId.actor,
          options.purge ? 'trait.purge' : 'trait.delete',
          { profileId: profile.id, traitKey: key },
        );
        if (options.purge) {
          await this.history.purge(manager, profile.id, 'trait', key, source);
          return;
        }
        await this.history.record(manager, profile.id, [
          {
            subject: 'trait',
            subjectKey: key,
            change: 'deleted',
            oldValue: { value: deleted.value, confidence: deleted.confidence },
            newValue: null,
            source,
          },
        ]);
      },
    );
  }

  /** The changes of a trait, newest first; also of a deleted one, until its profile is deleted. */
  async historyOf(profilePathId: ProfilePath, key: string): Promise<HistoryEntry[]> {
    assertTraitKey(key);
    const profile = await this.profiles.resolve(profilePathId);
    const entries = await this.history.of(profile.id, 'trait', key);
    if (entries.length === 0) throw traitNotFound(key);
    return entries;
  }

  /**
   * Sets the trait back to the value of one of its history entries (the value after that change, or
   * before it for a deletion), as a manual change recorded as `reverted`.
   */
  async revert(profilePathId: ProfilePath, key: string, historyId: string): Promise<TraitEntity> {
    const entries = await this.historyOf(profilePathId, key);
    const entry = entries.find((candidate) => candidate.id === historyId.toLowerCase());
    if (!entry) {
      throw new ApiError(
        HttpStatus.NOT_FOUND,
        'history_not_found',
        `Trait '${truncate(key)}' has no history entry '${truncate(historyId)}'.`,
      );
    }
    const restored = (entry.change === 'deleted' ? entry.oldValue : entry.newValue) as {
      value?: unknown;
    } | null;
    if (!restored || restored.value === undefined) {
      throw invalidField('historyId', 'invalid_history_id', 'That history entry holds no value to restore.');
    }
    const profile = await this.profiles.resolve(profilePathId);
    return inProfileWrite(
      this.dataSource,
      profile.id,
      () => profileNotFound(profilePathId),
      this.audit.audited(
        profilePathId.actor,
        'trait.revert',
        () => ({ profileId: profile.id, traitKey: key }),
        (manager) => this.writeManual(manager, profile.id, key, restored.value, 1, 'reverted', 'api'),
      ),
    );
  }

  private async writeManual(
    manager: EntityManager,
    profileId: string,
    key: string,
    value: unknown,
    confidence: number,
    change: 'reverted' | null,
    source: HistorySource,
  ): Promise<TraitEntity> {
    confidence = storableUnitInterval(confidence);
    const schema = this.schemas.get(key);
    const valueType = schema?.valueType ?? inferValueType(value);
    const check = checkTraitValue({ valueType, enumValues: schema?.enumValues }, value);
    if (!check.ok)
      throw invalidField(
        'value',
        'invalid_trait_value',
        `Invalid value for trait '${key}': ${check.reason}.`,
      );
    const old = await this.traits.lockOne(manager, profileId, key);
    const id = await this.traits.upsertManual(manager, {
      profileId,
      key,
      value: check.value,
      valueType,
      category: schema?.category ?? CUSTOM_TRAIT_CATEGORY,
      confidence,
    });
    await this.history.record(manager, profileId, [
      {
        subject: 'trait',
        subjectKey: key,
        change: change ?? (old ? 'updated' : 'created'),
        oldValue: old ?? null,
        newValue: { value: check.value, confidence },
        source,
      },
    ]);
    return this.traits.findOne(manager, profileId, id);
  }
}

function traitNotFound(key: string): ApiError {
  return new ApiError(HttpStatus.NOT_FOUND, 'trait_not_found', `Trait '${truncate(key)}' does not exist.`);
}

function assertTraitKey(key: string): void {
  if (!TRAIT_KEY_PATTERN.test(key)) {
    throw invalidField('key', 'invalid_trait_key', 'Trait keys are 1 to 100 letters, digits, _, - or .');
  }
}
