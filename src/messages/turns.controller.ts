import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { ListTurnsQueryDto } from './dto/list-turns-query.dto';
import { toTurnListResponse, TurnListResponseDto } from './dto/turn-response.dto';
import { TurnsService } from './turns.service';

@ApiTags('profiles')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
@Controller('api/profiles/:id/messages')
export class TurnsController {
  constructor(private readonly turns: TurnsService) {}

  /** The profile's chat turns, newest first: what the user said, the answer, and what was injected. */
  @Get()
  @RequiresScope('read')
  @ApiOkResponse({ type: TurnListResponseDto })
  @ApiBadRequestResponse({ description: '`invalid_limit`, `invalid_cursor`', type: ErrorResponseDto })
  async listTurns(
    @ProfileInPath() id: ProfilePath,
    @Query() query: ListTurnsQueryDto,
  ): Promise<TurnListResponseDto> {
    return toTurnListResponse(await this.turns.list(id, query));
  }
}
