import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import { LineWriter, requestLogger } from './request-logger';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { isForeignKeyViolation, isTransientDatabaseError } from './database-errors';
import { ApiError, toAnthropicErrorEnvelope } from './api-error';
import { errorMessage } from './error-message';
import { repeatedWarnings } from './warning-fold';

/** Codes for HTTP exceptions raised by the framework rather than by our services. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limit_exceeded',
  503: 'service_unavailable',
};

/** PostgreSQL errors caused by a value the client sent, not by the service. */
const CLIENT_DATA_SQLSTATES = new Set([
  '22021', // invalid byte sequence for encoding (NUL in text)
  '22P05', // untranslatable character (\u0000 in jsonb)
  '22P02', // invalid text representation
  '22003', // numeric value out of range
  '54000', // program limit exceeded (e.g. a string too long for an index or tsvector)
]);

/**
 * An error as the client may see it: an ApiError as it is, a write whose profile was deleted meanwhile
 * as 404, a value the database refused as 400
 * `invalid_value`, a database that is busy or gone as 503 `database_unavailable`, anything else as 500
 * with an id that the log line (with the stack) carries too. `where` names the request in the log.
 */
export function toApiError(exception: unknown, logger: LineWriter, where: string): ApiError {
  if (exception instanceof ApiError) return exception;
  if (isForeignKeyViolation(exception)) {
    // what a write referred to was deleted meanwhile (a profile erased while its ingest ran)
    const { constraint } = exception as { constraint?: unknown };
    return typeof constraint === 'string' && constraint.endsWith('_profile_id_fkey')
      ? new ApiError(
          HttpStatus.NOT_FOUND,
          'profile_not_found',
          'The profile was deleted while the request ran.',
        )
      : new ApiError(
          HttpStatus.NOT_FOUND,
          'not_found',
          'What the request refers to was deleted while it ran.',
        );
  }
  if (isClientDataError(exception)) {
    return new ApiError(HttpStatus.BAD_REQUEST, 'invalid_value', 'A value in the request cannot be stored.');
  }
  if (isTransientDatabaseError(exception)) {
    // The pool had no connection to give in time, or the server went away: a moment's trouble.
    const problem = `database unavailable: ${errorMessage(exception)}`;
    // one warning per problem per interval (then a count); each request's own line at debug
    if (repeatedWarnings.admit(problem)) logger.warn(`${problem} (on ${where})`);
    else logger.debug(`${problem} (on ${where})`);
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'database_unavailable',
      'The database is busy or unreachable; retry in a moment.',
    );
  }
  const errorId = randomUUID();
  logger.error(
    `Unexpected error ${errorId} on ${where}: ${describe(exception)}`,
    exception instanceof Error ? exception.stack : undefined,
  );
  return new ApiError(
    HttpStatus.INTERNAL_SERVER_ERROR,
    'internal_error',
    `An unexpected error occurred (error id ${errorId}).`,
  );
}

/**
 * The one place where errors become responses: everything leaves as the error envelope, and nothing
 * internal (stack, SQL, driver message) reaches the client. Unexpected errors are logged with an id
 * that the client also receives.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    if (response.headersSent) {
      // A stream was already under way; the body cannot carry an envelope any more.
      if (!response.writableEnded) response.end();
      return;
    }
    if (isHealthCheckFailure(exception)) {
      // Readiness answers in the Terminus format that probes and dashboards expect, also when it fails.
      response.status(exception.getStatus()).json(exception.getResponse());
      return;
    }
    const error = this.toApiError(exception, request);
    const body = speaksAnthropic(request) ? toAnthropicErrorEnvelope(error) : error.toEnvelope();
    response.status(error.status).json(body);
  }

  private toApiError(exception: unknown, request: Request): ApiError {
    if (exception instanceof HttpException) return this.fromHttpException(exception, request);
    return toApiError(
      exception,
      requestLogger(request, 'ExceptionFilter'),
      `${request.method} ${request.path}`,
    );
  }

  private fromHttpException(exception: HttpException, request: Request): ApiError {
    const status = exception.getStatus();
    const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
    if (status === 404) {
      return new ApiError(status, code, `No route ${request.method} ${request.path}.`);
    }
    if (status >= 500) return new ApiError(status, code, 'The service could not handle the request.');
    return new ApiError(status, code, exception.message);
  }
}

/** A PostgreSQL error caused by a value from the client, through TypeORM or straight from pg. */
function isClientDataError(exception: unknown): boolean {
  const driverError = exception instanceof QueryFailedError ? (exception.driverError as unknown) : exception;
  if (!(driverError instanceof DatabaseError)) return false;
  return driverError.code !== undefined && CLIENT_DATA_SQLSTATES.has(driverError.code);
}

/** The Anthropic Messages route answers its errors in Anthropic's shape, as its clients expect. */
function speaksAnthropic(request: Request): boolean {
  return request.path === '/v1/messages' || request.path.startsWith('/v1/messages/');
}

function isHealthCheckFailure(exception: unknown): exception is HttpException {
  if (!(exception instanceof HttpException) || exception.getStatus() !== 503) return false;
  const body = exception.getResponse();
  return typeof body === 'object' && body !== null && 'status' in body && 'details' in body;
}

function describe(exception: unknown): string {
  if (exception instanceof Error) return `${exception.name}: ${exception.message}`;
  return String(exception);
}
