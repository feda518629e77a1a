import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
  Res,
} from '@nestjs/common';
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
import { RequiresApiKey } from '../common/public.decorator';
import { CreateProfileDto, ListProfilesQueryDto, UpdateProfileDto } from './dto/profile-request.dto';
import {
  DeleteProfileResponseDto,
  ProfileDetailsResponseDto,
  ProfileExportDto,
  ProfileListResponseDto,
  ProfileResponseDto,
  toProfileDetailsResponse,
  toProfileDto,
  toProfileExportDto,
  toProfileListResponse,
} from './dto/profile-response.dto';
import { ProfilesService } from './profiles.service';

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

  /** List profiles, newest first. */
  @Get()
  @ApiOkResponse({ type: ProfileListResponseDto })
  async listProfiles(@Query() query: ListProfilesQueryDto): Promise<ProfileListResponseDto> {
    return toProfileListResponse(await this.profiles.list(query));
  }

  /** Create a profile, or return the existing one, by external id (201 when created, 200 when it existed). */
  @Post()
  @ApiCreatedResponse({ type: ProfileResponseDto, description: 'Created' })
  @ApiOkResponse({ type: ProfileResponseDto, description: 'Already existed' })
  async createProfile(
    @Body() body: CreateProfileDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ProfileResponseDto> {
    const { profile, created } = await this.profiles.getOrCreate(body.externalId);
    res.status(created ? HttpStatus.CREATED : HttpStatus.OK);
    return { profile: toProfileDto(profile) };
  }

  /** Get a profile with its traits and its 10 newest memories. */
  @Get(':id')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileDetailsResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async getProfile(@Param('id') id: string): Promise<ProfileDetailsResponseDto> {
    return toProfileDetailsResponse(await this.profiles.details(id));
  }

  /** Set the summary by hand (bumps summaryVersion); "" hands it back to automatic summarisation. */
  @Patch(':id')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async updateProfile(@Param('id') id: string, @Body() body: UpdateProfileDto): Promise<ProfileResponseDto> {
    return { profile: toProfileDto(await this.profiles.updateSummary(id, body.summary)) };
  }

  /** Delete the profile with its traits, memories and messages; irreversible. */
  @Delete(':id')
  @HttpCode(HttpStatus.OK)
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: DeleteProfileResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async deleteProfile(@Param('id') id: string): Promise<DeleteProfileResponseDto> {
    return { success: true, deleted: await this.profiles.delete(id) };
  }

  /** Export everything stored about the profile (data portability). */
  @Get(':id/export')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileExportDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async exportProfile(@Param('id') id: string): Promise<ProfileExportDto> {
    return toProfileExportDto(await this.profiles.export(id));
  }
}
