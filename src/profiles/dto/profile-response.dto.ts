import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { ProfileEntity } from '../profile.entity';

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

export class ProfileResponseDto {
  @ApiProperty({ type: ProfileDto })
  profile: ProfileDto;
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
