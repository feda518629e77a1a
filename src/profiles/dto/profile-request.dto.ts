import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { QueryInteger, Text, TrimString } from '../../common/dto-decorators';

export const MAX_EXTERNAL_ID_LENGTH = 255;
export const MAX_SUMMARY_LENGTH = 20_000;
export const MAX_PROFILE_PAGE = 100;

export class ListProfilesQueryDto {
  /** Maximum profiles returned (default 20; larger than 100 is lowered to 100). */
  @ApiPropertyOptional({ type: Number, minimum: 0, default: 20, maximum: MAX_PROFILE_PAGE })
  @QueryInteger('invalid_limit', MAX_PROFILE_PAGE)
  limit: number = 20;

  /** Profiles skipped (default 0). */
  @ApiPropertyOptional({ type: Number, minimum: 0, default: 0 })
  @QueryInteger('invalid_offset')
  offset: number = 0;

  /** Case-insensitive substring of externalId (`%` and `_` are taken literally). */
  @ApiPropertyOptional({ type: String, maxLength: MAX_EXTERNAL_ID_LENGTH })
  @IsOptional()
  @Text('invalid_search', MAX_EXTERNAL_ID_LENGTH, { allowBlank: true })
  search?: string;
}

export class CreateProfileDto {
  /** The caller's own identifier for the user (trimmed; 1 to 255 characters). */
  @TrimString()
  @Text('invalid_external_id', MAX_EXTERNAL_ID_LENGTH)
  externalId: string;
}

export class UpdateProfileDto {
  /** A summary written by hand; automatic summaries leave it alone until it is cleared with "". */
  @Text('invalid_summary', MAX_SUMMARY_LENGTH, { allowBlank: true })
  summary: string;
}
