import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { ContextService } from './context.service';
import { ContextRequestDto, ContextResponseDto, toContextResponse } from './dto/context.dto';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';

@ApiTags('context')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@Controller('api/profiles/:id/context')
export class ContextController {
  constructor(private readonly context: ContextService) {}

  /**
   * What the proxy would inject for this question, for apps and agents that call their LLM themselves:
   * the same text, with the traits and scored memories it carries. Does not count as using them.
   */
  @Post()
  @RequiresScope('read')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: ContextResponseDto })
  @ApiBadRequestResponse({
    description: '`invalid_question`, `invalid_max_memories`',
    type: ErrorResponseDto,
  })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async getContext(
    @ProfileInPath() id: ProfilePath,
    @Body() body: ContextRequestDto,
  ): Promise<ContextResponseDto> {
    return toContextResponse(await this.context.forQuestion(id, body.question, body.maxMemories));
  }
}
