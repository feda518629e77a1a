import { Body, Controller, HttpStatus, Patch, Post, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { Caller, RequestCaller } from '../common/request-access';
import { CreateProfileDto, UpdateProfileDto } from './dto/profile-request.dto';
import { ProfileResponseDto, toProfileDto } from './dto/profile-response.dto';
import { ProfilesService } from './profiles.service';
import { ProfileInPath, ProfilePath } from './profile-path';

export const PROFILE_ID_PARAM = {
  name: 'id',
  description: 'The internal UUID or the external id of the profile',
} as const;

@ApiTags('profiles')
@RequiresApiKey()
@ApiBadRequestResponse({ description: 'Invalid input (see `code`)', type: ErrorResponseDto })
@Controller('api/profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  /** Create a profile, or return the existing one, by external id (201 when created, 200 when it existed). */
  @Post()
  @RequiresScope('write')
  @ApiCreatedResponse({ type: ProfileResponseDto, description: 'Created' })
  @ApiOkResponse({ type: ProfileResponseDto, description: 'Already existed' })
  async createProfile(
    @Caller() caller: RequestCaller,
    @Body() body: CreateProfileDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ProfileResponseDto> {
    const { profile, created } = await this.profiles.getOrCreate(
      caller.access.application.id,
      body.externalId,
      caller.actor,
    );
    res.status(created ? HttpStatus.CREATED : HttpStatus.OK);
    return { profile: toProfileDto(profile) };
  }

  /** Set the summary by hand (bumps summaryVersion); "" hands it back to automatic summarisation. */
  @Patch(':id')
  @RequiresScope('write')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async updateProfile(
    @ProfileInPath() id: ProfilePath,
    @Body() body: UpdateProfileDto,
  ): Promise<ProfileResponseDto> {
    return { profile: toProfileDto(await this.profiles.updateSummary(id, body.summary)) };
  }
}
