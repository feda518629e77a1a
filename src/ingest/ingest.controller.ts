import { Body, Controller, HttpCode, HttpStatus, Post, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiInternalServerErrorResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { requestLogger } from '../common/request-logger';
import { IngestRateLimit } from '../common/rate-limit.decorator';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { IngestRequestDto } from './dto/ingest-request.dto';
import { IngestResponseDto, toIngestResponse } from './dto/ingest-response.dto';
import { IngestService } from './ingest.service';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';

@ApiTags('ingest')
@RequiresApiKey()
@Controller('api/profiles')
export class IngestController {
  constructor(private readonly ingest: IngestService) {}

  /** Extract traits and memories from a text synchronously and store them. */
  @Post(':id/ingest')
  @RequiresScope('write')
  @IngestRateLimit()
  @HttpCode(HttpStatus.OK)
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: IngestResponseDto })
  @ApiBadRequestResponse({
    description: '`invalid_data`, `data_too_large`, or another invalid field (see `code`)',
    type: ErrorResponseDto,
  })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  @ApiInternalServerErrorResponse({
    description:
      '`extraction_error` (type `internal_error`): the extraction model failed; retrying is advised',
    type: ErrorResponseDto,
  })
  async ingestText(
    @ProfileInPath() id: ProfilePath,
    @Body() body: IngestRequestDto,
    @Req() req: Request,
  ): Promise<IngestResponseDto> {
    return toIngestResponse(await this.ingest.ingest(id, body, requestLogger(req, 'IngestService')));
  }
}
