import { HttpStatus } from '@nestjs/common';
import { ApiError, invalidField } from '../common/api-error';
import { headerText } from '../common/header-text';
import { MAX_EXTERNAL_ID_LENGTH } from '../profiles/dto/profile-request.dto';

/** Where a protocol may carry the user id, in order of precedence: [param name, value]. */
export type UserIdCandidates = Array<[param: string, value: unknown]>;

export const USER_ID_HEADER = 'X-Service-Id';

/** The X-Service-Id header, decoded as UTF-8, as the first candidate of every protocol. */
export function userIdHeader(headers: Record<string, string | string[] | undefined>): [string, unknown] {
  return [USER_ID_HEADER, headerText(headers['x-service-id'], USER_ID_HEADER, 'invalid_user_id')];
}

/**
 * The caller's id for the user: the first candidate that is a non-empty string, trimmed. A candidate
 * of another type is an error (`invalid_user_id`), as is an id that is too long or holds a NUL.
 */
export function resolveUserId(candidates: UserIdCandidates): string {
  for (const [param, value] of candidates) {
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw invalidField(param, 'invalid_user_id', `${param} must be a string.`);
    }
  }
  for (const [param, value] of candidates) {
    if (typeof value !== 'string' || value.trim() === '') continue;
    const id = value.trim();
    if (id.length > MAX_EXTERNAL_ID_LENGTH || id.includes('\u0000')) {
      throw invalidField(
        param,
        'invalid_user_id',
        `The user id must be 1 to ${MAX_EXTERNAL_ID_LENGTH} characters.`,
      );
    }
    return id;
  }
  const names = candidates.map(([param]) => param);
  const choices = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0];
  throw new ApiError(HttpStatus.BAD_REQUEST, 'missing_user_id', `No user id: send ${choices}.`);
}
