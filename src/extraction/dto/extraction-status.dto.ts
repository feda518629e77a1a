import { ApiProperty } from '@nestjs/swagger';
import type { ExtractionStatus } from '../extraction-queue';

export class ExtractionStatusDto {
  /** Messages still to be learnt from. */
  @ApiProperty({ example: 2 })
  pending: number;

  /** Pending messages whose last try failed, waiting before the next one. */
  @ApiProperty({ example: 0 })
  backingOff: number;

  /** Messages given up after EXTRACTION_MAX_ATTEMPTS failed tries. */
  @ApiProperty({ example: 0 })
  failed: number;
}

export class ExtractionStatusResponseDto {
  @ApiProperty({ type: ExtractionStatusDto })
  extraction: ExtractionStatusDto;
}

export class ExtractionRetryResponseDto {
  /** Given-up messages put back in the queue. */
  @ApiProperty({ example: 3 })
  requeued: number;
}

export function toExtractionStatusDto(status: ExtractionStatus): ExtractionStatusResponseDto {
  return { extraction: { pending: status.pending, backingOff: status.backingOff, failed: status.failed } };
}
