import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey } from '../common/public.decorator';
import { SuccessResponseDto } from '../common/success-response.dto';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { PutTraitDto } from './dto/put-trait.dto';
import { TraitListResponseDto, TraitResponseDto, toTraitDto } from './dto/trait-response.dto';
import { TraitsService } from './traits.service';

const TRAIT_KEY_PARAM = { name: 'key', description: '1 to 100 letters, digits, _, - or .' } as const;

@ApiTags('traits')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({
  description: '`profile_not_found` (or `trait_not_found` on delete)',
  type: ErrorResponseDto,
})
@Controller('api/profiles/:id/traits')
export class TraitsController {
  constructor(private readonly traits: TraitsService) {}

  /** List the profile's traits with all their fields. */
  @Get()
  @ApiOkResponse({ type: TraitListResponseDto })
  async listTraits(@Param('id') id: string): Promise<TraitListResponseDto> {
    return { traits: (await this.traits.list(id)).map(toTraitDto) };
  }

  /** Create or replace a trait by hand (source `manual`: automatic extraction never changes it). */
  @Put(':key')
  @ApiParam(TRAIT_KEY_PARAM)
  @ApiOkResponse({ type: TraitResponseDto })
  @ApiBadRequestResponse({
    description: '`invalid_trait_key`, `invalid_trait_value`, `invalid_confidence`, `unknown_field`',
    type: ErrorResponseDto,
  })
  async putTrait(
    @Param('id') id: string,
    @Param('key') key: string,
    @Body() body: PutTraitDto,
  ): Promise<TraitResponseDto> {
    return { trait: toTraitDto(await this.traits.putManual(id, key, body.value, body.confidence)) };
  }

  /** Delete a trait. */
  @Delete(':key')
  @ApiParam(TRAIT_KEY_PARAM)
  @ApiOkResponse({ type: SuccessResponseDto })
  @ApiBadRequestResponse({ description: '`invalid_trait_key`', type: ErrorResponseDto })
  async deleteTrait(@Param('id') id: string, @Param('key') key: string): Promise<SuccessResponseDto> {
    await this.traits.delete(id, key);
    return { success: true };
  }
}
