import { ANY_JSON_VALUE_SCHEMA } from '../../common/json-value.schema';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsUUID } from 'class-validator';
import { OptionalField, UnitInterval } from '../../common/dto-decorators';

export class PutTraitDto {
  /** The value; it must match the trait's schema when the key has one. */
  @ApiProperty({
    description: 'Any JSON value except null; must match the schema of the key when there is one',
    ...ANY_JSON_VALUE_SCHEMA,
    example: 'German',
  })
  @IsDefined({ context: { code: 'invalid_trait_value' }, message: 'value is required' })
  value: unknown;

  /** 0.0 to 1.0; default 1.0. */
  @ApiPropertyOptional({ minimum: 0, maximum: 1, default: 1, type: Number })
  @OptionalField()
  @UnitInterval('invalid_confidence')
  confidence?: number;
}

export class RevertTraitDto {
  /** The history entry whose value the trait gets back (GET .../traits/{key}/history). */
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { context: { code: 'invalid_history_id' }, message: 'historyId must be a UUID' })
  historyId: string;
}
