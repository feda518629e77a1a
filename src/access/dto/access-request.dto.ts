import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsISO8601, IsOptional, Matches } from 'class-validator';
import { OptionalField, QueryInteger, Text, TrimString } from '../../common/dto-decorators';
import { Scope, SCOPES } from '../../common/request-access';

export const MAX_NAME_LENGTH = 100;
export const MAX_AUDIT_PAGE = 100;

export class CreateApplicationDto {
  /** The application's name (letters, digits, `.`, `_` and `-`; 1 to 100 characters), unique. */
  @TrimString()
  @Text('invalid_name', MAX_NAME_LENGTH)
  @Matches(/^[A-Za-z0-9._-]+$/, {
    context: { code: 'invalid_name' },
    message: 'name may hold only letters, digits, ".", "_" and "-"',
  })
  name: string;
}

export class CreateApiKeyDto {
  /** The application the key acts in, by id or name (an application key may name only its own). */
  @TrimString()
  @Text('invalid_application', MAX_NAME_LENGTH)
  application: string;

  /** What the key may do. */
  @ApiProperty({ enum: SCOPES, isArray: true, example: ['proxy'] })
  @IsArray({ context: { code: 'invalid_scopes' }, message: 'scopes must be an array of scopes' })
  @ArrayMinSize(1, { context: { code: 'invalid_scopes' }, message: 'scopes must name at least one scope' })
  @ArrayMaxSize(SCOPES.length, {
    context: { code: 'invalid_scopes' },
    message: 'scopes has too many entries',
  })
  @IsIn(SCOPES, {
    each: true,
    context: { code: 'invalid_scopes' },
    message: `each scope must be one of ${SCOPES.join(', ')}`,
  })
  scopes: Scope[];

  /** A name for people (e.g. "support bot"). */
  @TrimString()
  @Text('invalid_name', MAX_NAME_LENGTH)
  name: string;

  /** When the key stops working (ISO 8601); never when absent. */
  @ApiPropertyOptional({ type: String, format: 'date-time' })
  @OptionalField()
  @IsISO8601(
    { strict: true },
    { context: { code: 'invalid_expires_at' }, message: 'expiresAt must be an ISO 8601 time' },
  )
  expiresAt?: string;
}

export class ListAuditQueryDto {
  /** Only this application's events (id or name; an application key sees only its own). */
  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @Text('invalid_application', MAX_NAME_LENGTH)
  application?: string;

  /** Only events that name this profile (its internal id). */
  @ApiPropertyOptional({ type: String, format: 'uuid' })
  @IsOptional()
  @Matches(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
    context: { code: 'invalid_profile' },
    message: 'profile must be a profile id (UUID)',
  })
  profile?: string;

  /** Only this action (e.g. `profile.erase`). */
  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @Text('invalid_action', MAX_NAME_LENGTH)
  action?: string;

  /** Only events at or after this time (ISO 8601). */
  @ApiPropertyOptional({ type: String, format: 'date-time' })
  @IsOptional()
  @IsISO8601(
    { strict: true },
    { context: { code: 'invalid_since' }, message: 'since must be an ISO 8601 time' },
  )
  since?: string;

  /** The `next` of the previous page. */
  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @Matches(/^\d{1,18}$/, {
    context: { code: 'invalid_cursor' },
    message: 'cursor must be the next of a page',
  })
  cursor?: string;

  /** Maximum events returned (default 50; larger than 100 is lowered to 100). */
  @ApiPropertyOptional({ type: Number, minimum: 0, default: 50, maximum: MAX_AUDIT_PAGE })
  @QueryInteger('invalid_limit', MAX_AUDIT_PAGE)
  limit: number = 50;
}
