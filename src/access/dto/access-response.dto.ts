import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { SCOPES } from '../../common/request-access';
import type { RequestAccess, Scope } from '../../common/request-access';
import type { StoredApiKey } from '../api-keys.repository';
import type { StoredApplication } from '../applications.repository';
import type { AuditEvent, AuditTarget } from '../audit-trail';

export class ApplicationDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'support' })
  name: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class ApplicationResponseDto {
  @ApiProperty({ type: ApplicationDto })
  application: ApplicationDto;
}

export class ApplicationListResponseDto {
  @ApiProperty({ type: [ApplicationDto] })
  applications: ApplicationDto[];
}

export function toApplicationDto(application: StoredApplication): ApplicationDto {
  return { id: application.id, name: application.name, createdAt: iso(application.createdAt) };
}

export class ApplicationRefDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'support' })
  name: string;
}

export class ApiKeyDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'support bot' })
  name: string;

  @ApiProperty({ example: '3f9a0c1b2d4e', description: 'The public part of the key, after `pms_`' })
  prefix: string;

  @ApiProperty({ type: ApplicationRefDto })
  application: ApplicationRefDto;

  @ApiProperty({ enum: SCOPES, isArray: true })
  scopes: Scope[];

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastUsedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt: string | null;
}

export class ApiKeyResponseDto {
  @ApiProperty({ type: ApiKeyDto })
  key: ApiKeyDto;
}

export class CreatedApiKeyResponseDto extends ApiKeyResponseDto {
  @ApiProperty({ example: 'pms_3f9a0c1b2d4e_…', description: 'The key itself: shown in this answer only' })
  secret: string;
}

export class ApiKeyListResponseDto {
  @ApiProperty({ type: [ApiKeyDto] })
  keys: ApiKeyDto[];
}

export function toApiKeyDto(key: StoredApiKey): ApiKeyDto {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    application: key.application,
    scopes: key.scopes,
    createdAt: iso(key.createdAt),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
  };
}

export class CurrentKeyDto {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for the root key' })
  id: string | null;

  @ApiProperty({ example: 'support bot' })
  name: string;

  @ApiProperty({ type: String, nullable: true, description: 'null for the root key' })
  prefix: string | null;

  @ApiProperty({ description: 'Whether this is the root key (SERVICE_API_KEY)' })
  root: boolean;

  @ApiProperty({ type: ApplicationRefDto, description: 'The application the request acts in' })
  application: ApplicationRefDto;

  @ApiProperty({ enum: SCOPES, isArray: true })
  scopes: Scope[];
}

export class CurrentKeyResponseDto {
  @ApiProperty({ type: CurrentKeyDto })
  key: CurrentKeyDto;
}

export function toCurrentKeyResponse(access: RequestAccess): CurrentKeyResponseDto {
  return {
    key: {
      id: access.keyId,
      name: access.keyName,
      prefix: access.prefix,
      root: access.root,
      application: { id: access.application.id, name: access.application.name },
      scopes: [...access.scopes],
    },
  };
}

export class AuditEventDto {
  @ApiProperty({ example: '1042' })
  id: string;

  @ApiProperty({ format: 'date-time' })
  at: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for the root key' })
  keyId: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  application: string | null;

  @ApiProperty({ example: 'profile.erase' })
  action: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { profileId: '6f1c…' },
    description:
      'What the action was on, by id: profileId, memoryId, traitKey, keyId, applicationId, keyPrefix',
  })
  target: AuditTarget;

  @ApiProperty({ type: String, nullable: true })
  requestId: string | null;

  @ApiProperty({ enum: ['success', 'denied'] })
  outcome: string;
}

export class AuditListResponseDto {
  @ApiProperty({ type: [AuditEventDto] })
  events: AuditEventDto[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The cursor of the next (older) page; null at the end',
  })
  next: string | null;
}

export function toAuditEventDto(event: AuditEvent): AuditEventDto {
  return {
    id: event.id,
    at: iso(event.at),
    keyId: event.keyId,
    application: event.applicationId,
    action: event.action,
    target: event.target,
    requestId: event.requestId,
    outcome: event.outcome,
  };
}

export function toAuditListResponse(page: {
  events: AuditEvent[];
  next: string | null;
}): AuditListResponseDto {
  return { events: page.events.map(toAuditEventDto), next: page.next };
}
