import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../common/iso';
import type { HistoryEntry } from './profile-history';

const CHANGES = ['created', 'updated', 'superseded', 'reinforced', 'deleted', 'reverted', 'purged'];
const SOURCES = ['api', 'mcp', 'extraction', 'ingest'];

export class HistoryEntryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['memory', 'trait'] })
  subject: string;

  /** The memory's id or the trait's key. */
  @ApiProperty()
  subjectKey: string;

  @ApiProperty({ enum: CHANGES })
  change: string;

  @ApiProperty({ nullable: true, description: 'The value before the change (null when created)' })
  oldValue: unknown;

  @ApiProperty({ nullable: true, description: 'The value after the change (null when deleted)' })
  newValue: unknown;

  @ApiProperty({ enum: SOURCES })
  source: string;

  /** The conversation messages extraction learnt it from. */
  @ApiProperty({ type: [String] })
  sourceMessageIds: string[];

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class HistoryResponseDto {
  @ApiProperty({ type: [HistoryEntryDto] })
  history: HistoryEntryDto[];
}

export function toHistoryEntryDto(entry: HistoryEntry): HistoryEntryDto {
  return {
    id: entry.id,
    subject: entry.subject,
    subjectKey: entry.subjectKey,
    change: entry.change,
    oldValue: entry.oldValue ?? null,
    newValue: entry.newValue ?? null,
    source: entry.source,
    sourceMessageIds: entry.sourceMessageIds,
    createdAt: iso(entry.createdAt),
  };
}
