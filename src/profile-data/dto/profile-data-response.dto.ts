import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { HistoryEntryDto, toHistoryEntryDto } from '../../history/history-entry.dto';
import { MemorySummaryDto, toMemorySummaryDto } from '../../memories/dto/memory-response.dto';
import { MessageDto, toMessageDto } from '../../messages/dto/message-response.dto';
import {
  ProfileCoreDto,
  ProfileDto,
  toProfileCoreDto,
  toProfileDto,
} from '../../profiles/dto/profile-response.dto';
import {
  ExportedTraitDto,
  ProfileTraitDto,
  toExportedTraitDto,
  toProfileTraitDto,
} from '../../traits/dto/trait-response.dto';
import type { CountedProfilePage, ProfileDetails, ProfileExport } from '../profile-data.service';
import { AuditEventDto, toAuditEventDto } from '../../access/dto/access-response.dto';

export class ProfileWithTraitsDto extends ProfileDto {
  @ApiProperty({ type: [ProfileTraitDto] })
  traits: ProfileTraitDto[];
}

/** How the profile's conversation is being learnt from, and the last failure that still stands. */
export class LearningStateDto {
  /** The extractor that learns: the LLM, or the heuristic rules (EXTRACTOR). */
  @ApiProperty({ enum: ['llm', 'heuristic'], example: 'llm' })
  extractor: 'llm' | 'heuristic';

  /** Whether the rules learn from a batch after the LLM's last failed try (EXTRACTION_RULES_FALLBACK). */
  @ApiProperty({ example: true })
  rulesFallback: boolean;

  /** Messages not yet learnt from, some perhaps waiting after a failed try. */
  @ApiProperty({ example: 0 })
  pendingMessages: number;

  /** Messages given up after their last failed try: `POST /api/profiles/{id}/extraction/retry` tries them again. */
  @ApiProperty({ example: 0 })
  failedMessages: number;

  /** Messages the rules learnt from after the LLM's last failed try. */
  @ApiProperty({ example: 2 })
  fellBackMessages: number;

  /** The error of the newest failure that still stands (a pending retry, a message given up, or learnt by the rules). */
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'the LLM call failed 3 time(s); last: unusable answer: no JSON object',
  })
  lastError: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastErrorAt: string | null;
}

export class ProfileDetailsResponseDto {
  @ApiProperty({ type: ProfileWithTraitsDto })
  profile: ProfileWithTraitsDto;

  /** The 10 newest memories. */
  @ApiProperty({ type: [MemorySummaryDto] })
  recentMemories: MemorySummaryDto[];

  @ApiProperty({ type: LearningStateDto })
  learning: LearningStateDto;
}

export class DeletedCountsDto {
  @ApiProperty({ example: 3 })
  traits: number;

  @ApiProperty({ example: 12 })
  memories: number;

  @ApiProperty({ example: 40 })
  messages: number;
}

export class ProfileCountsDto extends DeletedCountsDto {
  /** Messages still to be learnt from. */
  @ApiProperty({ example: 2 })
  pending: number;

  /** Messages extraction gave up on (`POST .../extraction/retry` tries them again). */
  @ApiProperty({ example: 0 })
  failed: number;
}

export class CountedProfileDto extends ProfileDto {
  /** How many traits, memories (superseded ones too) and messages the profile holds; learning state. */
  @ApiProperty({ type: ProfileCountsDto })
  counts: ProfileCountsDto;
}

export class ProfileListResponseDto {
  @ApiProperty({ type: [CountedProfileDto] })
  profiles: CountedProfileDto[];

  /** Profiles matching `search`, regardless of limit and offset. */
  @ApiProperty({ example: 1 })
  total: number;
}

export class DeleteProfileResponseDto {
  @ApiProperty({ example: true })
  success: boolean;

  @ApiProperty({ type: DeletedCountsDto })
  deleted: DeletedCountsDto;
}

export class ProfileExportDto {
  @ApiProperty({ type: ProfileCoreDto })
  profile: ProfileCoreDto;

  @ApiProperty({ type: [ExportedTraitDto] })
  traits: ExportedTraitDto[];

  @ApiProperty({ type: [MemorySummaryDto] })
  memories: MemorySummaryDto[];

  @ApiProperty({ type: [MessageDto] })
  messages: MessageDto[];

  /** Every change of the profile's memories and traits, oldest first. */
  @ApiProperty({ type: [HistoryEntryDto] })
  history: HistoryEntryDto[];

  /** The audit events that name the profile (this export's too), oldest first. */
  @ApiProperty({ type: [AuditEventDto] })
  audit: AuditEventDto[];

  @ApiProperty({ format: 'date-time' })
  exportedAt: string;
}

export function toProfileListResponse(page: CountedProfilePage): ProfileListResponseDto {
  return {
    profiles: page.profiles.map(({ profile, counts }) => ({
      ...toProfileDto(profile),
      counts: { ...counts },
    })),
    total: page.total,
  };
}

export function toProfileDetailsResponse(details: ProfileDetails): ProfileDetailsResponseDto {
  return {
    profile: { ...toProfileDto(details.profile), traits: details.traits.map(toProfileTraitDto) },
    recentMemories: details.recentMemories.map(toMemorySummaryDto),
    learning: { ...details.learning, lastErrorAt: iso(details.learning.lastErrorAt) },
  };
}

export function toProfileExportDto(data: ProfileExport): ProfileExportDto {
  return {
    profile: toProfileCoreDto(data.profile),
    traits: data.traits.map(toExportedTraitDto),
    memories: data.memories.map(toMemorySummaryDto),
    messages: data.messages.map(toMessageDto),
    history: data.history.map(toHistoryEntryDto),
    audit: data.audit.map(toAuditEventDto),
    exportedAt: data.exportedAt.toISOString(),
  };
}
