import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

/** The query of a DELETE that may purge what it deletes from the history. */
export class PurgeQueryDto {
  /**
   * `true` removes the item's values from the history too: its entries are replaced by one `purged`
   * entry (that it existed, when, and the change's source), and other memories' entries lose its
   * content. Without it the history keeps the deleted values until the profile is deleted.
   */
  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false' })
  @IsOptional()
  @IsIn(['true', 'false'], { context: { code: 'invalid_purge' }, message: 'purge must be true or false' })
  purge?: 'true' | 'false';
}
