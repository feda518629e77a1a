import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto';

export const IS_PUBLIC = 'isPublic';

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
