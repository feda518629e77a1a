import { ANY_JSON_VALUE_SCHEMA } from '../../common/json-value.schema';
import { ApiProperty } from '@nestjs/swagger';
import { MemorySummaryDto, toMemorySummaryDto } from '../../memories/dto/memory-response.dto';
import { ProfileCoreDto, toProfileCoreDto } from '../../profiles/dto/profile-response.dto';
import type { IngestResult } from '../ingest.service';

export class IngestedTraitDto {
  @ApiProperty({ example: 'interests' })
  key: string;

  /** The trait's value after this ingest (a list trait holds the merged items). */
  @ApiProperty({
    description: 'Any JSON value; its type matches the trait schema.',
    ...ANY_JSON_VALUE_SCHEMA,
    example: ['hiking'],
  })
  value: unknown;

  @ApiProperty({ minimum: 0, maximum: 1, example: 0.8 })
  confidence: number;

  /** `create`: the profile had no such trait; `update`: an extracted trait was replaced or extended. */
  @ApiProperty({ enum: ['create', 'update'] })
  action: 'create' | 'update';
}

export class IngestStatsDto {
  @ApiProperty({ example: 1 })
  traitsCreated: number;

  @ApiProperty({ example: 0 })
  traitsUpdated: number;

  @ApiProperty({ example: 2 })
  memoriesCreated: number;
}

export class IngestExtractedDto {
  /** The traits this ingest created or updated (manual traits are never changed). */
  @ApiProperty({ type: [IngestedTraitDto] })
  traits: IngestedTraitDto[];

  /** The memories this ingest created; a repeat of a stored memory is not created again. */
  @ApiProperty({ type: [MemorySummaryDto] })
  memories: MemorySummaryDto[];

  @ApiProperty({ type: IngestStatsDto })
  stats: IngestStatsDto;
}

export class IngestResponseDto {
  /** The profile after the ingest. */
  @ApiProperty({ type: ProfileCoreDto })
  profile: ProfileCoreDto;

  @ApiProperty({ type: IngestExtractedDto })
  extracted: IngestExtractedDto;

  @ApiProperty({ type: String, nullable: true, example: 'crm-import' })
  source: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: { batch: 7 } })
  metadata: Record<string, unknown> | null;
}

export function toIngestResponse(result: IngestResult): IngestResponseDto {
  return {
    profile: toProfileCoreDto(result.profile),
    extracted: {
      traits: result.traits.map(({ key, value, confidence, action }) => ({ key, value, confidence, action })),
      memories: result.memories.map(toMemorySummaryDto),
      stats: {
        traitsCreated: result.traits.filter((trait) => trait.action === 'create').length,
        traitsUpdated: result.traits.filter((trait) => trait.action === 'update').length,
        memoriesCreated: result.memories.length,
      },
    },
    source: result.source,
    metadata: result.metadata,
  };
}
