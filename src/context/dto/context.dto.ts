import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { OptionalField, Text } from '../../common/dto-decorators';
import { MEMORY_TYPES, MemoryType } from '../../memories/memory.entity';
import { MAX_QUESTION_CHARS } from '../../memories/memory-candidates';
import type { ExplainedContext, ScoredMemory } from '../context.service';

export const MAX_CONTEXT_MEMORIES = 50;

export class ContextRequestDto {
  /** The question (or the latest user message) the context is for. */
  @ApiProperty({ maxLength: MAX_QUESTION_CHARS, example: 'What should I cook tonight?' })
  @Text('invalid_question', MAX_QUESTION_CHARS)
  question: string;

  /** At most this many memories (0 to 50; default CONTEXT_MAX_MEMORIES). */
  @ApiPropertyOptional({ type: Number, minimum: 0, maximum: MAX_CONTEXT_MEMORIES })
  @OptionalField()
  @IsInt({
    context: { code: 'invalid_max_memories' },
    message: 'maxMemories must be an integer from 0 to 50',
  })
  @Min(0, {
    context: { code: 'invalid_max_memories' },
    message: 'maxMemories must be an integer from 0 to 50',
  })
  @Max(MAX_CONTEXT_MEMORIES, {
    context: { code: 'invalid_max_memories' },
    message: 'maxMemories must be an integer from 0 to 50',
  })
  maxMemories?: number;
}

export class ContextTraitDto {
  @ApiProperty({ example: 'preferred_language' })
  key: string;

  @ApiProperty({ description: 'Any JSON value', example: 'Python' })
  value: unknown;
}

export class ContextMemoryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  content: string;

  @ApiProperty({ enum: MEMORY_TYPES })
  type: MemoryType;

  @ApiProperty({ minimum: 0, maximum: 1 })
  importance: number;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  /** The rank score: relevance to the question, importance × decay and recency, weighted. */
  @ApiProperty()
  score: number;
}

export class ContextResponseDto {
  /** Exactly what the proxy would inject for this question ('' when the profile has nothing to say). */
  @ApiProperty()
  text: string;

  /** The traits the text carries, in its order. */
  @ApiProperty({ type: [ContextTraitDto] })
  traits: ContextTraitDto[];

  /** The memories the text carries, best first. */
  @ApiProperty({ type: [ContextMemoryDto] })
  memories: ContextMemoryDto[];
}

export function toContextResponse(explained: ExplainedContext): ContextResponseDto {
  return {
    text: explained.context.text,
    traits: explained.traits.map(({ key, value }) => ({ key, value })),
    memories: explained.memories.map(toContextMemoryDto),
  };
}

/** A ranked memory as the context endpoint and the MCP search tool show it. */
export function toContextMemoryDto(memory: ScoredMemory): ContextMemoryDto {
  return {
    id: memory.id,
    content: memory.content,
    type: memory.type,
    importance: memory.importance,
    createdAt: memory.createdAt.toISOString(),
    score: memory.score,
  };
}
