import { ArgumentMetadata, HttpStatus, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from './api-error';

/**
 * Keys class-transformer leaves out of the DTO it builds (so that they cannot reach an object's
 * prototype): the whitelist never sees them, and they would be dropped in silence.
 */
const KEYS_NEVER_COPIED = ['__proto__', 'constructor'];

/**
 * Nest's ValidationPipe that also refuses, in a validated body or query at any depth, the keys
 * class-transformer never copies, as the unknown fields they are.
 */
class DtoValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type === 'body' || metadata.type === 'query') && this.toValidate(metadata)) {
      const path = keyNeverCopied(value, metadata.type);
      if (path !== null) throw unknownField(path);
    }
    return super.transform(value, metadata);
  }
}

/** The path of the first key of KEYS_NEVER_COPIED in a parsed value (depth bounded by the body parser). */
function keyNeverCopied(value: unknown, path: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const key of Object.keys(value)) {
    const at = path === 'body' || path === 'query' ? key : `${path}.${key}`;
    if (KEYS_NEVER_COPIED.includes(key)) return at;
    const found = keyNeverCopied((value as Record<string, unknown>)[key], at);
    if (found !== null) return found;
  }
  return null;
}

function unknownField(path: string): ApiError {
  return new ApiError(HttpStatus.BAD_REQUEST, 'unknown_field', `Unknown field '${path}'.`, path);
}

/**
 * The global pipe: DTOs are whitelisted (unknown fields are rejected, `__proto__` and `constructor`
 * included) and transformed. A failure becomes one ApiError for the first field at fault, with a
 * stable code: the constraint's `context.code` when the DTO sets one, else `invalid_<field>`.
 */
export function createValidationPipe(): ValidationPipe {
  return new DtoValidationPipe({
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
  if (constraintName === 'whitelistValidation') return unknownField(path);
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
