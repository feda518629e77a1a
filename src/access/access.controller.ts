import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { Caller } from '../common/request-access';
import type { RequestCaller as CallerOf } from '../common/request-access';
import { AccessService } from './access.service';
import { CreateApiKeyDto, CreateApplicationDto, ListAuditQueryDto } from './dto/access-request.dto';
import {
  ApiKeyListResponseDto,
  ApiKeyResponseDto,
  ApplicationListResponseDto,
  ApplicationResponseDto,
  AuditListResponseDto,
  CreatedApiKeyResponseDto,
  CurrentKeyResponseDto,
  toApiKeyDto,
  toApplicationDto,
  toAuditListResponse,
  toCurrentKeyResponse,
} from './dto/access-response.dto';

@ApiTags('access')
@RequiresApiKey()
@Controller('api')
export class AccessController {
  constructor(private readonly access: AccessService) {}

  /** Create an application (root key only). */
  @Post('applications')
  @RequiresScope('admin')
  @ApiCreatedResponse({ type: ApplicationResponseDto })
  @ApiConflictResponse({ description: '`application_exists`', type: ErrorResponseDto })
  async createApplication(
    @Caller() caller: CallerOf,
    @Body() body: CreateApplicationDto,
  ): Promise<ApplicationResponseDto> {
    return { application: toApplicationDto(await this.access.createApplication(caller, body.name)) };
  }

  /** The applications (an application key sees its own). */
  @Get('applications')
  @RequiresScope('admin')
  @ApiOkResponse({ type: ApplicationListResponseDto })
  async listApplications(@Caller() caller: CallerOf): Promise<ApplicationListResponseDto> {
    return { applications: (await this.access.listApplications(caller)).map(toApplicationDto) };
  }

  /** Create a key; its secret is in this answer only. */
  @Post('keys')
  @RequiresScope('admin')
  @ApiCreatedResponse({ type: CreatedApiKeyResponseDto })
  @ApiNotFoundResponse({ description: '`application_not_found`', type: ErrorResponseDto })
  async createKey(
    @Caller() caller: CallerOf,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyResponseDto> {
    const created = await this.access.createKey(caller, body);
    return { key: toApiKeyDto(created.key), secret: created.secret };
  }

  /** The keys, without secrets (an application key sees its application's). */
  @Get('keys')
  @RequiresScope('admin')
  @ApiOkResponse({ type: ApiKeyListResponseDto })
  async listKeys(@Caller() caller: CallerOf): Promise<ApiKeyListResponseDto> {
    return { keys: (await this.access.listKeys(caller)).map(toApiKeyDto) };
  }

  /** The key of this request and the application it acts in (any valid key, any scope). */
  @Get('keys/current')
  @RequiresScope('any')
  @ApiOkResponse({ type: CurrentKeyResponseDto })
  currentKey(@Caller() caller: CallerOf): CurrentKeyResponseDto {
    return toCurrentKeyResponse(caller.access);
  }

  /** Revoke a key: every replica refuses it within a second. */
  @Delete('keys/:id')
  @RequiresScope('admin')
  @ApiOkResponse({ type: ApiKeyResponseDto })
  @ApiNotFoundResponse({ description: '`key_not_found`', type: ErrorResponseDto })
  async revokeKey(@Caller() caller: CallerOf, @Param('id') id: string): Promise<ApiKeyResponseDto> {
    return { key: toApiKeyDto(await this.access.revokeKey(caller, id)) };
  }

  /** The audit trail, newest first, with filters and cursor paging. */
  @Get('audit')
  @RequiresScope('admin')
  @ApiOkResponse({ type: AuditListResponseDto })
  async listAudit(
    @Caller() caller: CallerOf,
    @Query() query: ListAuditQueryDto,
  ): Promise<AuditListResponseDto> {
    return toAuditListResponse(await this.access.auditEvents(caller, query));
  }
}
