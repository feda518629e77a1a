import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { PurgeQueryDto } from '../history/purge-query.dto';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { SuccessResponseDto } from '../common/success-response.dto';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { HistoryResponseDto, toHistoryEntryDto } from '../history/history-entry.dto';
import { PutTraitDto, RevertTraitDto } from './dto/put-trait.dto';
import { TraitListResponseDto, TraitResponseDto, toTraitDto } from './dto/trait-response.dto';
import { TraitsService } from './traits.service';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';

const TRAIT_KEY_PARAM = { name: 'key', description: '1 to 100 letters, digits, _, - or .' } as const;

@ApiTags('traits')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({
  description: '`profile_not_found`, `trait_not_found`, `history_not_found`',
  type: ErrorResponseDto,
})
@Controller('api/profiles/:id/traits')
export class TraitsController {
  constructor(private readonly traits: TraitsService) {}

  /** List the profile's traits with all their fields. */
  @Get()
  @RequiresScope('read')
  @ApiOkResponse({ type: TraitListResponseDto })
  async listTraits(@ProfileInPath() id: ProfilePath): Promise<TraitListResponseDto> {
    return { traits: (await this.traits.list(id)).map(toTraitDto) };
  }

  /** Create or replace a trait by hand (source `manual`: automatic extraction never changes it). */
  @Put(':key')
  @RequiresScope('write')
  @ApiParam(TRAIT_KEY_PARAM)
  @ApiOkResponse({ type: TraitResponseDto })
  @ApiBadRequestResponse({
    description: '`invalid_trait_key`, `invalid_trait_value`, `invalid_confidence`, `unknown_field`',
    type: ErrorResponseDto,
  })
  async putTrait(
    @ProfileInPath() id: ProfilePath,
    @Param('key') key: string,
    @Body() body: PutTraitDto,
  ): Promise<TraitResponseDto> {
    return { trait: toTraitDto(await this.traits.putManual(id, key, body.value, body.confidence)) };
  }

  /** Every change of a trait, newest first; a deleted trait's history stays until the profile goes. */
  @Get(':key/history')
  @RequiresScope('read')
  @ApiParam(TRAIT_KEY_PARAM)
  @ApiOkResponse({ type: HistoryResponseDto })
  @ApiBadRequestResponse({ description: '`invalid_trait_key`', type: ErrorResponseDto })
  async getTraitHistory(
    @ProfileInPath() id: ProfilePath,
    @Param('key') key: string,
  ): Promise<HistoryResponseDto> {
    return { history: (await this.traits.historyOf(id, key)).map(toHistoryEntryDto) };
  }

  /** Set the trait back to the value of one of its history entries, as a manual change (recorded). */
  @Post(':key/revert')
  @RequiresScope('write')
  @HttpCode(HttpStatus.OK)
  @ApiParam(TRAIT_KEY_PARAM)
  @ApiOkResponse({ type: TraitResponseDto })
  @ApiBadRequestResponse({
    description: '`invalid_trait_key`, `invalid_history_id`, `unknown_field`',
    type: ErrorResponseDto,
  })
  async revertTrait(
    @ProfileInPath() id: ProfilePath,
    @Param('key') key: string,
    @Body() body: RevertTraitDto,
  ): Promise<TraitResponseDto> {
    return { trait: toTraitDto(await this.traits.revert(id, key, body.historyId)) };
  }

  /** Delete a trait; with `purge=true` its history is purged too. */
  @Delete(':key')
  @RequiresScope('write')
  @ApiParam(TRAIT_KEY_PARAM)
  @ApiOkResponse({ type: SuccessResponseDto })
  @ApiBadRequestResponse({ description: '`invalid_trait_key`, `invalid_purge`', type: ErrorResponseDto })
  async deleteTrait(
    @ProfileInPath() id: ProfilePath,
    @Param('key') key: string,
    @Query() query: PurgeQueryDto,
  ): Promise<SuccessResponseDto> {
    await this.traits.delete(id, key, { purge: query.purge === 'true' });
    return { success: true };
  }
}
