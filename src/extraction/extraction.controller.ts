import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey } from '../common/public.decorator';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import {
  ExtractionRetryResponseDto,
  ExtractionStatusResponseDto,
  toExtractionStatusDto,
} from './dto/extraction-status.dto';
import { ExtractionAdminService } from './extraction-admin.service';

@ApiTags('extraction')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
@Controller('api/profiles/:id/extraction')
export class ExtractionController {
  constructor(private readonly admin: ExtractionAdminService) {}

  /** How much of the profile's conversation is still to be learnt, waiting after a failure, or given up. */
  @Get()
  @ApiOkResponse({ type: ExtractionStatusResponseDto })
  async getExtractionStatus(@Param('id') id: string): Promise<ExtractionStatusResponseDto> {
    return toExtractionStatusDto(await this.admin.status(id));
  }

  /** Tries again the messages that extraction gave up on (after EXTRACTION_MAX_ATTEMPTS failures). */
  @Post('retry')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: ExtractionRetryResponseDto })
  async retryExtraction(@Param('id') id: string): Promise<ExtractionRetryResponseDto> {
    return { requeued: await this.admin.retryFailed(id) };
  }
}
