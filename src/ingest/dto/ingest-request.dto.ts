import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsObject, IsString, Matches, MinLength, ValidateBy } from 'class-validator';
import { OptionalField, Text } from '../../common/dto-decorators';

/** Largest `data`, in UTF-8 bytes (SPEC §8). */
export const MAX_INGEST_DATA_BYTES = 102_400;
export const MAX_SOURCE_LENGTH = 1_000;
/** Largest `metadata`, as JSON text: it is tracking information, echoed back, not a payload. */
export const MAX_METADATA_JSON_LENGTH = 65_536;

/** `data`: a non-blank string without NUL (`invalid_data`) of at most 102400 UTF-8 bytes (`data_too_large`). */
function IngestData() {
  const invalid = { context: { code: 'invalid_data' } };
  return applyDecorators(
    IsString({ ...invalid, message: 'data must be a string' }),
    MinLength(1, { ...invalid, message: 'data must not be empty' }),
    Matches(/\S/, { ...invalid, message: 'data must not be blank' }),
    // eslint-disable-next-line no-control-regex -- NUL is exactly what must be refused
    Matches(/^[^\u0000]*$/, { ...invalid, message: 'data must not contain NUL characters' }),
    ValidateBy(
      {
        name: 'maxUtf8Bytes',
        validator: {
          validate: (value: unknown) =>
            typeof value === 'string' && Buffer.byteLength(value, 'utf8') <= MAX_INGEST_DATA_BYTES,
          defaultMessage: () => `data must be at most ${MAX_INGEST_DATA_BYTES} bytes (UTF-8)`,
        },
      },
      { context: { code: 'data_too_large' } },
    ),
  );
}

/** `metadata`: a JSON object of bounded size (`invalid_metadata`). */
function Metadata() {
  const invalid = { context: { code: 'invalid_metadata' } };
  return applyDecorators(
    IsObject({ ...invalid, message: 'metadata must be an object' }),
    ValidateBy(
      {
        name: 'maxJsonLength',
        validator: {
          validate: (value: unknown) => JSON.stringify(value).length <= MAX_METADATA_JSON_LENGTH,
          defaultMessage: () => `metadata must be at most ${MAX_METADATA_JSON_LENGTH} characters of JSON`,
        },
      },
      invalid,
    ),
  );
}

export class IngestRequestDto {
  /** The text to learn from: a non-empty string of at most 102400 bytes (UTF-8). */
  @ApiProperty({ example: "I'm Anna. I live in Berlin and I love hiking." })
  @IngestData()
  data: string;

  /** Where the text comes from (free text, for audit); echoed back. */
  @ApiPropertyOptional({ maxLength: MAX_SOURCE_LENGTH, example: 'crm-import' })
  @OptionalField()
  @Text('invalid_source', MAX_SOURCE_LENGTH, { allowBlank: true })
  source?: string;

  /** A free-form object for your own tracking; echoed back. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { batch: 7 } })
  @OptionalField()
  @Metadata()
  metadata?: Record<string, unknown>;

  /** Extract traits (default true). */
  @ApiPropertyOptional({ default: true })
  @OptionalField()
  @IsBoolean({ context: { code: 'invalid_extract_traits' }, message: 'extractTraits must be a boolean' })
  extractTraits: boolean = true;

  /** Extract memories (default true). */
  @ApiPropertyOptional({ default: true })
  @OptionalField()
  @IsBoolean({ context: { code: 'invalid_extract_memories' }, message: 'extractMemories must be a boolean' })
  extractMemories: boolean = true;
}
