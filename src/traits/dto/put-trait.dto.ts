import { ANY_JSON_VALUE_SCHEMA } from '../../common/json-value.schema';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined } from 'class-validator';
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
