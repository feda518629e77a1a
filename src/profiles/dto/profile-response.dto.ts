import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { HistoryEntryDto, toHistoryEntryDto } from '../../history/history-entry.dto';
import { MemorySummaryDto, toMemorySummaryDto } from '../../memories/dto/memory-response.dto';
import { MessageDto, toMessageDto } from '../../messages/dto/message-response.dto';
import {
  ExportedTraitDto,
  ProfileTraitDto,
  toExportedTraitDto,
  toProfileTraitDto,
} from '../../traits/dto/trait-response.dto';
import { ProfileEntity } from '../profile.entity';
import type { ProfileDetails, ProfileExport, ProfilePage } from '../profiles.service';

/** The profile fields carried by export and ingest. */
export class ProfileCoreDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'user-42',
    description: "The caller's own identifier",
  })
  externalId: string | null;

  @ApiProperty({ example: '' })
  summary: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;
}

/** A profile as the list and create responses carry it. */
export class ProfileDto extends ProfileCoreDto {
  @ApiProperty({ example: 0 })
  summaryVersion: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  summaryUpdatedAt: string | null;
}

export class ProfileWithTraitsDto extends ProfileDto {
  @ApiProperty({ type: [ProfileTraitDto] })
  traits: ProfileTraitDto[];
}

export class ProfileResponseDto {
  @ApiProperty({ type: ProfileDto })
  profile: ProfileDto;
}

export class ProfileListResponseDto {
  @ApiProperty({ type: [ProfileDto] })
  profiles: ProfileDto[];

  /** Profiles matching `search`, regardless of limit and offset. */
  @ApiProperty({ example: 1 })
  total: number;
}

export class ProfileDetailsResponseDto {
  @ApiProperty({ type: ProfileWithTraitsDto })
  profile: ProfileWithTraitsDto;

  /** The 10 newest memories. */
  @ApiProperty({ type: [MemorySummaryDto] })
  recentMemories: MemorySummaryDto[];
}

export class DeletedCountsDto {
  @ApiProperty({ example: 3 })
  traits: number;

  @ApiProperty({ example: 12 })
  memories: number;

  @ApiProperty({ example: 40 })
  messages: number;
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

  @ApiProperty({ format: 'date-time' })
  exportedAt: string;
}

export function toProfileCoreDto(profile: ProfileEntity): ProfileCoreDto {
  return {
    id: profile.id,
    externalId: profile.externalId,
    summary: profile.summary,
    createdAt: iso(profile.createdAt),
    updatedAt: iso(profile.updatedAt),
  };
}

export function toProfileDto(profile: ProfileEntity): ProfileDto {
  return {
    id: profile.id,
    externalId: profile.externalId,
    summary: profile.summary,
    summaryVersion: profile.summaryVersion,
    summaryUpdatedAt: iso(profile.summaryUpdatedAt),
    createdAt: iso(profile.createdAt),
    updatedAt: iso(profile.updatedAt),
  };
}

export function toProfileListResponse(page: ProfilePage): ProfileListResponseDto {
  return { profiles: page.profiles.map(toProfileDto), total: page.total };
}

export function toProfileDetailsResponse(details: ProfileDetails): ProfileDetailsResponseDto {
  return {
    profile: { ...toProfileDto(details.profile), traits: details.traits.map(toProfileTraitDto) },
    recentMemories: details.recentMemories.map(toMemorySummaryDto),
  };
}

export function toProfileExportDto(data: ProfileExport): ProfileExportDto {
  return {
    profile: toProfileCoreDto(data.profile),
    traits: data.traits.map(toExportedTraitDto),
    memories: data.memories.map(toMemorySummaryDto),
    messages: data.messages.map(toMessageDto),
    history: data.history.map(toHistoryEntryDto),
    exportedAt: data.exportedAt.toISOString(),
  };
}
