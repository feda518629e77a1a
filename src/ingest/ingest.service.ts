import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError, profileNotFound } from '../common/api-error';
import { LineWriter } from '../common/request-logger';
import { inProfileWrite } from '../database/profile-write-lock';
import { ExtractionFailedError } from '../extraction/extraction-errors';
import { ExtractionService } from '../extraction/extraction.service';
import { WrittenTrait } from '../extraction/extracted-trait-writer';
import { SummaryService } from '../extraction/summary.service';
import { MemoryEntity } from '../memories/memory.entity';
import { ProfileEntity } from '../profiles/profile.entity';
import { ProfilesService } from '../profiles/profiles.service';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import { IngestRequestDto } from './dto/ingest-request.dto';
import { byInternalId, ProfilePath } from '../profiles/profile-path';
import { AuditTrail } from '../access/audit-trail';

export interface IngestResult {
  profile: ProfileEntity;
  traits: WrittenTrait[];
  memories: MemoryEntity[];
  source: string | null;
  metadata: Record<string, unknown> | null;
}

/** Synchronous extraction from a text the caller sends (SPEC §4.9): extract, store, answer with what changed. */
@Injectable()
export class IngestService {
  private readonly logger = new Logger('IngestService');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: ProfilesService,
    private readonly extraction: ExtractionService,
    private readonly summary: SummaryService,
    private readonly schemas: TraitSchemaRegistry,
    private readonly audit: AuditTrail,
  ) {}

  /** `log`: where the request's lines go (they carry its id); the process's own logger by default. */
  async ingest(
    profilePathId: ProfilePath,
    request: IngestRequestDto,
    log: LineWriter = this.logger,
  ): Promise<IngestResult> {
    const profile = await this.profiles.resolve(profilePathId);
    const schemas = this.schemas.all();
    const result = await this.extraction
      .extract(request.data, schemas, {
        extractTraits: request.extractTraits,
        extractMemories: request.extractMemories,
      })
      .catch((error: unknown) => {
        if (!(error instanceof ExtractionFailedError)) throw error;
        log.warn(`ingest for profile ${profile.id} failed: ${error.message}`);
        throw new ApiError(
          HttpStatus.INTERNAL_SERVER_ERROR,
          'extraction_error',
          'Trait extraction failed: the extraction model gave no usable answer after retries. Retrying is advised.',
          undefined,
          'internal_error',
        );
      });
    const applied = await inProfileWrite(
      this.dataSource,
      profile.id,
      () => profileNotFound(profilePathId),
      this.audit.audited(
        profilePathId.actor,
        'profile.ingest',
        () => ({ profileId: profile.id }),
        (manager) => this.extraction.apply(manager, profile.id, result, schemas, [], 'ingest'),
      ),
    );
    this.extraction.announce(profile.id, applied);
    // The profile row itself changes only when a new summary is written.
    const summarised = applied.changed && (await this.summary.refreshIfDue(profile.id));
    return {
      profile: summarised ? await this.profiles.resolve(byInternalId(profilePathId, profile.id)) : profile,
      traits: applied.traits,
      memories: applied.createdMemories,
      source: request.source ?? null,
      metadata: request.metadata ?? null,
    };
  }
}
