import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { QueryInteger } from '../../common/dto-decorators';

export const MAX_TURN_PAGE = 50;

export class ListTurnsQueryDto {
  /** Maximum turns returned (default 20; larger than 50 is lowered to 50). */
  @ApiPropertyOptional({ type: Number, minimum: 0, default: 20, maximum: MAX_TURN_PAGE })
  @QueryInteger('invalid_limit', MAX_TURN_PAGE)
  limit: number = 20;

  /** The `next` of the previous page: turns older than it. */
  @ApiPropertyOptional({ type: String, example: '1042' })
  @IsOptional()
  @Matches(/^\d{1,18}$/, { context: { code: 'invalid_cursor' }, message: 'cursor must be a next value' })
  cursor?: string;
}
