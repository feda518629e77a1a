import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError, invalidField, truncate } from '../common/api-error';
import { ProfilesService } from '../profiles/profiles.service';
import { TRAIT_KEY_PATTERN } from './trait-schema';
import { TraitSchemaRegistry } from './trait-schema-registry';
import { TraitEntity } from './trait.entity';
import { checkTraitValue, inferValueType } from './trait-value';

export const CUSTOM_TRAIT_CATEGORY = 'custom';

@Injectable()
export class TraitsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: ProfilesService,
    private readonly schemas: TraitSchemaRegistry,
  ) {}

  private get traits() {
    return this.dataSource.getRepository(TraitEntity);
  }

  async list(profilePathId: string): Promise<TraitEntity[]> {
    const profile = await this.profiles.resolve(profilePathId);
    return this.traits.find({ where: { profileId: profile.id }, order: { key: 'ASC' } });
  }

  /** Creates or replaces a trait by hand: source `manual`, which extraction never overwrites. */
  async putManual(profilePathId: string, key: string, value: unknown, confidence = 1): Promise<TraitEntity> {
    assertTraitKey(key);
    const profile = await this.profiles.resolve(profilePathId);
    const schema = this.schemas.get(key);
    const valueType = schema?.valueType ?? inferValueType(value);
    const check = checkTraitValue({ valueType, enumValues: schema?.enumValues }, value);
    if (!check.ok)
      throw invalidField(
        'value',
        'invalid_trait_value',
        `Invalid value for trait '${key}': ${check.reason}.`,
      );

    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `INSERT INTO traits (profile_id, key, value, value_type, category, confidence, source)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, 'manual')
       ON CONFLICT (profile_id, key) DO UPDATE
         SET value = EXCLUDED.value, value_type = EXCLUDED.value_type, category = EXCLUDED.category,
             confidence = EXCLUDED.confidence, source = 'manual', source_message_ids = '{}', updated_at = now()
       RETURNING id`,
      [
        profile.id,
        key,
        JSON.stringify(check.value),
        valueType,
        schema?.category ?? CUSTOM_TRAIT_CATEGORY,
        confidence,
      ],
    );
    return this.traits.findOneByOrFail({ id: rows[0].id as string, profileId: profile.id });
  }

  async delete(profilePathId: string, key: string): Promise<void> {
    assertTraitKey(key);
    const profile = await this.profiles.resolve(profilePathId);
    const result = await this.traits.delete({ profileId: profile.id, key });
    if (!result.affected) {
      throw new ApiError(HttpStatus.NOT_FOUND, 'trait_not_found', `Trait '${truncate(key)}' does not exist.`);
    }
  }
}

function assertTraitKey(key: string): void {
  if (!TRAIT_KEY_PATTERN.test(key)) {
    throw invalidField('key', 'invalid_trait_key', 'Trait keys are 1 to 100 letters, digits, _, - or .');
  }
}
