import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { MEMORY_TYPES, MemoryEntity } from '../memory.entity';

/** A memory as the get-profile, export and ingest responses carry it. */
export class MemorySummaryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Has two children' })
  content: string;

  @ApiProperty({ enum: MEMORY_TYPES })
  type: string;

  @ApiProperty({ minimum: 0, maximum: 1, example: 0.5 })
  importance: number;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

/** A memory with all its fields. */
export class MemoryDto extends MemorySummaryDto {
  @ApiProperty({ example: 1, description: '1.0 when new; lowered for every full day the memory goes unused' })
  decayFactor: number;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  lastAccessedAt: string | null;

  /** The newer memory that replaced this one; null while it is current. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  supersededBy: string | null;

  /** When a newer memory replaced it: it is kept, but never injected. */
  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  supersededAt: string | null;
}

export class MemoryListResponseDto {
  @ApiProperty({ type: [MemoryDto] })
  memories: MemoryDto[];
}

export class MemoryResponseDto {
  @ApiProperty({ type: MemoryDto })
  memory: MemoryDto;
}

export function toMemorySummaryDto(memory: MemoryEntity): MemorySummaryDto {
  return {
    id: memory.id,
    content: memory.content,
    type: memory.type,
    importance: memory.importance,
    createdAt: iso(memory.createdAt),
  };
}

export function toMemoryDto(memory: MemoryEntity): MemoryDto {
  return {
    ...toMemorySummaryDto(memory),
    decayFactor: memory.decayFactor,
    lastAccessedAt: iso(memory.lastAccessedAt),
    supersededBy: memory.supersededBy ?? null,
    supersededAt: iso(memory.supersededAt ?? null),
  };
}
