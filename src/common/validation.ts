import { HttpStatus, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from './api-error';

/**
 * The global pipe: DTOs are whitelisted (unknown fields are rejected) and transformed. A failure
 * becomes one ApiError for the first field at fault, with a stable code: the constraint's
 * `context.code` when the DTO sets one, else `invalid_<field>`.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => toApiError(errors),
  });
}

function toApiError(errors: ValidationError[]): ApiError {
  const { error, path } = firstLeaf(errors[0], errors[0]?.property ?? 'body');
  const constraints = error?.constraints ?? {};
  const [constraintName, message] = Object.entries(constraints)[0] ?? ['invalid', `${path} is invalid`];
  if (constraintName === 'whitelistValidation') {
    return new ApiError(HttpStatus.BAD_REQUEST, 'unknown_field', `Unknown field '${path}'.`, path);
  }
  const contextCode = Object.values(error?.contexts ?? {})
    .map((context) => (context as { code?: unknown }).code)
    .find((code): code is string => typeof code === 'string');
  const code = contextCode ?? `invalid_${snakeCase(error?.property ?? path)}`;
  return new ApiError(HttpStatus.BAD_REQUEST, code, message, path);
}

function firstLeaf(
  error: ValidationError | undefined,
  path: string,
): { error?: ValidationError; path: string } {
  if (!error) return { path };
  if (error.constraints && Object.keys(error.constraints).length > 0) return { error, path };
  const child = error.children?.[0];
  if (!child) return { error, path };
  return firstLeaf(child, `${path}.${child.property}`);
}

function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}
