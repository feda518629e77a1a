import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ErrorDetailDto {
  /** Human-readable explanation. */
  @ApiProperty({ example: "Profile 'alice' does not exist." })
  message: string;

  /** Error family: invalid_request_error, authentication_error, not_found, rate_limit_error, internal_error, upstream_error. */
  @ApiProperty({ example: 'not_found' })
  type: string;

  /** Stable machine-readable code (see the README's table). */
  @ApiProperty({ example: 'profile_not_found' })
  code: string;

  /** The request field at fault, when there is one. */
  @ApiPropertyOptional({ example: 'limit' })
  param?: string;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorDetailDto })
  error: ErrorDetailDto;
}
