import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey } from '../common/public.decorator';
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

/** The routes of /api/profiles that list, read or erase profiles with what they hold. */
@ApiTags('profiles')
@RequiresApiKey()
@ApiBadRequestResponse({ description: 'Invalid input (see `code`)', type: ErrorResponseDto })
@Controller('api/profiles')
export class ProfileDataController {
  constructor(private readonly profileData: ProfileDataService) {}

  /** List profiles, newest first, with the counts of what each holds. */
  @Get()
  @ApiOkResponse({ type: ProfileListResponseDto })
  async listProfiles(@Query() query: ListProfilesQueryDto): Promise<ProfileListResponseDto> {
    return toProfileListResponse(await this.profileData.list(query));
  }

  /** Get a profile with its traits and its 10 newest memories. */
  @Get(':id')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileDetailsResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async getProfile(@Param('id') id: string): Promise<ProfileDetailsResponseDto> {
    return toProfileDetailsResponse(await this.profileData.details(id));
  }

  /** Delete the profile with its traits, memories and messages; irreversible. */
  @Delete(':id')
  @HttpCode(HttpStatus.OK)
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: DeleteProfileResponseDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async deleteProfile(@Param('id') id: string): Promise<DeleteProfileResponseDto> {
    return { success: true, deleted: await this.profileData.delete(id) };
  }

  /** Export everything stored about the profile (data portability). */
  @Get(':id/export')
  @ApiParam(PROFILE_ID_PARAM)
  @ApiOkResponse({ type: ProfileExportDto })
  @ApiNotFoundResponse({ description: '`profile_not_found`', type: ErrorResponseDto })
  async exportProfile(@Param('id') id: string): Promise<ProfileExportDto> {
    return toProfileExportDto(await this.profileData.export(id));
  }
}
