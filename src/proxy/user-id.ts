import { HttpStatus } from '@nestjs/common';
import { ApiError, invalidField } from '../common/api-error';
import { MAX_EXTERNAL_ID_LENGTH } from '../profiles/dto/profile-request.dto';
import { ChatRequest } from './chat-request';

/**
 * The caller's id for the user: the X-Service-Id header, then metadata.profile_id, then `user`; the
 * first non-empty one wins, trimmed.
 */
export function resolveUserId(header: string | string[] | undefined, body: ChatRequest): string {
  const candidates: Array<[string, unknown]> = [
    ['X-Service-Id', Array.isArray(header) ? header[0] : header],
    ['metadata.profile_id', body.metadata?.profile_id],
    ['user', body.user],
  ];
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
  throw new ApiError(
    HttpStatus.BAD_REQUEST,
    'missing_user_id',
    'No user id: send the X-Service-Id header, metadata.profile_id or user.',
  );
}
