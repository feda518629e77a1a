import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { OptionalField, QueryInteger, Text, UnitInterval } from '../../common/dto-decorators';
import { MEMORY_TYPES, MemoryType } from '../memory.entity';

export const MAX_MEMORY_CONTENT_LENGTH = 10_000;
export const MAX_MEMORY_PAGE = 100;

const TYPE_MESSAGE = `type must be one of ${MEMORY_TYPES.join(', ')}`;

export class ListMemoriesQueryDto {
  /** Only memories of this type. */
  @ApiPropertyOptional({ enum: MEMORY_TYPES })
  @IsOptional()
  @IsIn(MEMORY_TYPES, { context: { code: 'invalid_memory_type' }, message: TYPE_MESSAGE })
  type?: MemoryType;

  /** Maximum memories returned (default 20; larger than 100 is lowered to 100). */
  @ApiPropertyOptional({ type: Number, minimum: 0, default: 20, maximum: MAX_MEMORY_PAGE })
  @QueryInteger('invalid_limit', MAX_MEMORY_PAGE)
  limit: number = 20;

  /** Memories skipped, in the list's order (default 0): the next page starts at offset + limit. */
  @ApiPropertyOptional({ type: Number, minimum: 0, default: 0 })
  @QueryInteger('invalid_offset')
  offset: number = 0;

  /** `superseded` lists the memories newer ones replaced, too. */
  @ApiPropertyOptional({ enum: ['superseded'] })
  @IsOptional()
  @IsIn(['superseded'], { context: { code: 'invalid_include' }, message: 'include must be superseded' })
  include?: 'superseded';
}

export class CreateMemoryDto {
  /** The fact, preference, event or context to remember (1 to 10,000 characters). */
  @ApiProperty({ maxLength: MAX_MEMORY_CONTENT_LENGTH, example: 'Has two children' })
  @Text('invalid_content', MAX_MEMORY_CONTENT_LENGTH)
  content: string;

  @ApiProperty({ enum: MEMORY_TYPES })
  @IsIn(MEMORY_TYPES, { context: { code: 'invalid_memory_type' }, message: TYPE_MESSAGE })
  type: MemoryType;

  /** 0.0 to 1.0; default 0.5. */
  @ApiPropertyOptional({ minimum: 0, maximum: 1, default: 0.5, type: Number })
  @OptionalField()
  @UnitInterval('invalid_importance')
  importance: number = 0.5;
}

export class UpdateMemoryDto {
  @ApiPropertyOptional({ maxLength: MAX_MEMORY_CONTENT_LENGTH })
  @OptionalField()
  @Text('invalid_content', MAX_MEMORY_CONTENT_LENGTH)
  content?: string;

  @ApiPropertyOptional({ enum: MEMORY_TYPES })
  @OptionalField()
  @IsIn(MEMORY_TYPES, { context: { code: 'invalid_memory_type' }, message: TYPE_MESSAGE })
  type?: MemoryType;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, type: Number })
  @OptionalField()
  @UnitInterval('invalid_importance')
  importance?: number;
}
