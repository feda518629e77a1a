import { HttpStatus } from '@nestjs/common';

/** The `type` of an error envelope, one per family of HTTP status. */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found'
  | 'rate_limit_error'
  | 'internal_error'
  | 'upstream_error'
  | 'service_unavailable';

const TYPE_BY_STATUS: Record<number, ApiErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'upstream_error',
  503: 'service_unavailable',
  504: 'upstream_error',
};

export function errorTypeForStatus(status: number): ApiErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request_error');
}

/** Anthropic's error type for an HTTP status (docs.claude.com/en/api/errors). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** The JSON body of every error response. */
export interface ErrorEnvelope {
  error: { message: string; type: ApiErrorType; code: string; param?: string };
}

/**
 * A failure that the client is told about: a stable `code`, the HTTP status and a message safe to show.
 * Services throw it; the exception filter turns it into the error envelope.
 */
export class ApiError extends Error {
  readonly type: ApiErrorType;

  constructor(
    readonly status: HttpStatus,
    readonly code: string,
    message: string,
    readonly param?: string,
    type?: ApiErrorType,
  ) {
    super(message);
    this.name = 'ApiError';
    this.type = type ?? errorTypeForStatus(status);
  }

  toEnvelope(): ErrorEnvelope {
    return {
      error: {
        message: this.message,
        type: this.type,
        code: this.code,
        ...(this.param === undefined ? {} : { param: this.param }),
      },
    };
  }
}

export const profileNotFound = (id: string | { pathId: string }) =>
  new ApiError(
    HttpStatus.NOT_FOUND,
    'profile_not_found',
    `Profile '${truncate(typeof id === 'string' ? id : id.pathId)}' does not exist.`,
  );

export const invalidField = (param: string, code: string, message: string) =>
  new ApiError(HttpStatus.BAD_REQUEST, code, message, param);

/** Keeps client-supplied text short when it is echoed in a message. */
export function truncate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** The same error in the Anthropic Messages API's shape (the `/v1/messages` route), with our code kept. */
export function toAnthropicErrorEnvelope(error: ApiError): {
  type: 'error';
  error: { type: string; message: string; code: string; param?: string };
} {
  return {
    type: 'error',
    error: {
      type: anthropicErrorType(error.status),
      message: error.message,
      code: error.code,
      ...(error.param === undefined ? {} : { param: error.param }),
    },
  };
}
