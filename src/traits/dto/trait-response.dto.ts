import { ANY_JSON_VALUE_SCHEMA } from '../../common/json-value.schema';
import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { TraitEntity } from '../trait.entity';

const ANY_JSON_VALUE = {
  description: 'Any JSON value; its type matches the trait schema.',
  ...ANY_JSON_VALUE_SCHEMA,
  example: 'German',
};

/** A trait as the get-profile response carries it (no valueType, no category). */
export class ProfileTraitDto {
  @ApiProperty({ example: 'preferred_language' })
  key: string;

  @ApiProperty(ANY_JSON_VALUE)
  value: unknown;

  @ApiProperty({ minimum: 0, maximum: 1, example: 0.9 })
  confidence: number;

  @ApiProperty({ enum: ['extracted', 'manual'] })
  source: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;
}

/** A trait with all its fields. */
export class TraitDto extends ProfileTraitDto {
  @ApiProperty({ example: 'string', description: 'string, enum, number, boolean, array or object' })
  valueType: string;

  @ApiProperty({ example: 'identity', description: 'identity, preferences, context, or custom' })
  category: string;
}

/** A trait as the export carries it. */
export class ExportedTraitDto {
  @ApiProperty()
  key: string;

  @ApiProperty(ANY_JSON_VALUE)
  value: unknown;

  @ApiProperty({ minimum: 0, maximum: 1 })
  confidence: number;

  @ApiProperty({ enum: ['extracted', 'manual'] })
  source: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class TraitListResponseDto {
  @ApiProperty({ type: [TraitDto] })
  traits: TraitDto[];
}

export class TraitResponseDto {
  @ApiProperty({ type: TraitDto })
  trait: TraitDto;
}

export function toTraitDto(trait: TraitEntity): TraitDto {
  return {
    key: trait.key,
    value: trait.value,
    valueType: trait.valueType,
    category: trait.category,
    confidence: trait.confidence,
    source: trait.source,
    createdAt: iso(trait.createdAt),
    updatedAt: iso(trait.updatedAt),
  };
}

export function toProfileTraitDto(trait: TraitEntity): ProfileTraitDto {
  return {
    key: trait.key,
    value: trait.value,
    confidence: trait.confidence,
    source: trait.source,
    createdAt: iso(trait.createdAt),
    updatedAt: iso(trait.updatedAt),
  };
}

export function toExportedTraitDto(trait: TraitEntity): ExportedTraitDto {
  return {
    key: trait.key,
    value: trait.value,
    confidence: trait.confidence,
    source: trait.source,
    createdAt: iso(trait.createdAt),
  };
}
