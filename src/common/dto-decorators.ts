import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import {
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

/**
 * A non-negative integer query parameter written as digits only (`10abc`, `1e3`, `-1` and `` are
 * rejected with `code`). Values above `clampTo` are lowered to it.
 */
export function QueryInteger(code: string, clampTo?: number) {
  return applyDecorators(
    IsOptional(),
    Transform(({ value }: { value: unknown }) => {
      if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return value;
      const parsed = Number(value);
      return clampTo === undefined ? parsed : Math.min(parsed, clampTo);
    }),
    IsInt({ context: { code }, message: ({ property }) => `${property} must be a non-negative integer` }),
    Min(0, { context: { code }, message: ({ property }) => `${property} must be a non-negative integer` }),
  );
}

/**
 * An optional body field: it may be absent, but when present it is validated, so `null` is rejected
 * (class-validator's IsOptional would let null through).
 */
export function OptionalField() {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/** A number from 0.0 to 1.0 (never clamped). */
export function UnitInterval(code: string) {
  return applyDecorators(
    IsNumber(
      { allowNaN: false, allowInfinity: false },
      { context: { code }, message: ({ property }) => `${property} must be a number from 0.0 to 1.0` },
    ),
    Min(0, { context: { code }, message: ({ property }) => `${property} must be a number from 0.0 to 1.0` }),
    Max(1, { context: { code }, message: ({ property }) => `${property} must be a number from 0.0 to 1.0` }),
  );
}

// eslint-disable-next-line no-control-regex -- NUL is exactly what must be refused
const NO_NUL_CHARACTER = /^[^\u0000]*$/;

/**
 * A string of at most `maxLength` characters without NUL characters (PostgreSQL cannot store them);
 * unless `allowBlank`, it must contain something other than white space.
 */
export function Text(code: string, maxLength: number, options: { allowBlank?: boolean } = {}) {
  const decorators = [
    IsString({ context: { code }, message: ({ property }) => `${property} must be a string` }),
    MaxLength(maxLength, {
      context: { code },
      message: ({ property }) => `${property} must be at most ${maxLength} characters`,
    }),
    Matches(NO_NUL_CHARACTER, {
      context: { code },
      message: ({ property }) => `${property} must not contain NUL characters`,
    }),
  ];
  if (!options.allowBlank) {
    decorators.push(
      MinLength(1, { context: { code }, message: ({ property }) => `${property} must not be empty` }),
      Matches(/\S/, { context: { code }, message: ({ property }) => `${property} must not be blank` }),
    );
  }
  return applyDecorators(...decorators);
}

export function TrimString() {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));
}
