import { Controller, Delete, Get, HttpCode, HttpStatus, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { Caller, RequestCaller } from '../common/request-access';
import { ListProfilesQueryDto } from '../profiles/dto/profile-request.dto';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import {
  DeleteProfileResponseDto,
  ProfileDetailsResponseDto,
  ProfileExportDto,
  ProfileListResponseDto,
  toProfileDetailsResponse,
  toProfileExportDto,
  toProfileListResponse,
} from './dto/profile-data-response.dto';
import { ProfileDataService } from './profile-data.service';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';

/** The routes of /api/profiles that list, read or erase profiles with what they hold. */
@ApiTags('profiles')
@RequiresApiKey()
@ApiBadRequestResponse({ description: 'Invalid input (see `code`)', type: ErrorResponseDto })
@Controller('api/profiles')
export class ProfileDataController {
  constructor(private readonly profileData: ProfileDataService) {}

  /** List profiles, newest first, with the counts of what each holds. */
  @Get()
  @RequiresScope('read')
  @ApiOkResponse({ type: ProfileListResponseDto })
  async listProfiles(
    @Caller() caller: RequestCaller,
    @Query() query: ListProfilesQueryDto,
  ): Promise<ProfileListResponseDto> {
    return toProfileListResponse(await this.profileData.list(caller.access.application.id, query));
  }

  /** Get a profile with its traits and its 10 newest memories. */
  @Get(':id')
  @RequiresScope('read')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileDetailsResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async getProfile(@ProfileInPath() id: ProfilePath): Promise<ProfileDetailsResponseDto> {
    return toProfileDetailsResponse(await this.profileData.details(id));
  }

  /** Delete the profile with its traits, memories and messages; irreversible. */
  @Delete(':id')
  @RequiresScope('admin')
  @HttpCode(HttpStatus.OK)
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: DeleteProfileResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async deleteProfile(@ProfileInPath() id: ProfilePath): Promise<DeleteProfileResponseDto> {
    return { success: true, deleted: await this.profileData.delete(id) };
  }

  /** Export everything stored about the profile (data portability). */
  @Get(':id/export')
  @RequiresScope('read')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileExportDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async exportProfile(@ProfileInPath() id: ProfilePath): Promise<ProfileExportDto> {
    return toProfileExportDto(await this.profileData.export(id));
  }
}
