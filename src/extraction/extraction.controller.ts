import { Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import {
  ExtractionRetryResponseDto,
  ExtractionStatusResponseDto,
  toExtractionStatusDto,
} from './dto/extraction-status.dto';
import { ExtractionAdminService } from './extraction-admin.service';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';

@ApiTags('extraction')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
@Controller('api/profiles/:id/extraction')
export class ExtractionController {
  constructor(private readonly admin: ExtractionAdminService) {}

  /** How much of the profile's conversation is still to be learnt, waiting after a failure, or given up. */
  @Get()
  @RequiresScope('read')
  @ApiOkResponse({ type: ExtractionStatusResponseDto })
  async getExtractionStatus(@ProfileInPath() id: ProfilePath): Promise<ExtractionStatusResponseDto> {
    return toExtractionStatusDto(await this.admin.status(id));
  }

  /** Tries again the messages that extraction gave up on (after EXTRACTION_MAX_ATTEMPTS failures). */
  @Post('retry')
  @RequiresScope('write')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: ExtractionRetryResponseDto })
  async retryExtraction(@ProfileInPath() id: ProfilePath): Promise<ExtractionRetryResponseDto> {
    return { requeued: await this.admin.retryFailed(id) };
  }
}
