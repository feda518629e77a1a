import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto';
import type { Scope } from './request-access';

export const IS_PUBLIC = 'isPublic';
export const REQUIRED_SCOPE = 'requiredScope';

/** Opens a route or controller to callers without the API key, and says so in the API docs. */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension('x-access', 'public'));

/**
 * Marks a controller as behind the API key (the guard is closed by default; this documents it).
 * The docs test checks that every route carries one of the two.
 */
export const RequiresApiKey = () =>
  applyDecorators(
    ApiBearerAuth(),
    ApiExtension('x-access', 'api-key'),
    ApiUnauthorizedResponse({
      description: '`missing_api_key` or `invalid_api_key` (only when SERVICE_API_KEY is set)',
      type: ErrorResponseDto,
    }),
  );

/**
 * The scope a key needs for the route (on a route or a whole controller): the access guard refuses a key
 * without it with 403 `insufficient_scope`, and the API docs show it as `x-required-scope`. A route
 * that is neither public nor scoped is open to the root key only, as is one marked `root`; `any` lets
 * every valid key in.
 */
export const RequiresScope = (scope: Scope | 'any' | 'root') =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension('x-required-scope', scope),
    ...(scope === 'any' || scope === 'root'
      ? []
      : [
          ApiForbiddenResponse({
            description: `\`insufficient_scope\`: the key lacks the \`${scope}\` scope`,
            type: ErrorResponseDto,
          }),
        ]),
  );
