import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import type { StoredTurn, TurnPage } from '../turns.repository';

export class InjectedMemoryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  /** The memory's content now; null when it has been deleted since. */
  @ApiProperty({ type: String, nullable: true })
  content: string | null;
}

/** What the proxy injected for the turn; null for turns stored before it was recorded. */
export class InjectedContextDto {
  /** The keys of the injected traits. */
  @ApiProperty({ type: [String], example: ['name'] })
  traits: string[];

  @ApiProperty({ type: [InjectedMemoryDto] })
  memories: InjectedMemoryDto[];
}

/** One chat turn through the proxy: what the user said and the answer. */
export class TurnDto {
  /** The request id of the turn (the `X-Request-Id` of its log line). */
  @ApiProperty({ example: 'b8f0c1e2' })
  requestId: string;

  /** The user's messages of the turn, oldest first. */
  @ApiProperty({ type: [String], example: ['Where should I eat tonight?'] })
  said: string[];

  @ApiProperty({ example: 'Try the new ramen place.' })
  answer: string;

  @ApiProperty({ example: 'gpt-4o-mini' })
  model: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: InjectedContextDto, nullable: true })
  injected: InjectedContextDto | null;
}

export class TurnListResponseDto {
  @ApiProperty({ type: [TurnDto] })
  turns: TurnDto[];

  /** The `cursor` of the next (older) page; null on the last page. */
  @ApiProperty({ type: String, nullable: true, example: '1042' })
  next: string | null;
}

export function toTurnDto(turn: StoredTurn): TurnDto {
  return {
    requestId: turn.requestId,
    said: turn.said,
    answer: turn.answer,
    model: turn.model,
    createdAt: iso(turn.createdAt),
    injected: turn.injected,
  };
}

export function toTurnListResponse(page: TurnPage): TurnListResponseDto {
  return { turns: page.turns.map(toTurnDto), next: page.next };
}
