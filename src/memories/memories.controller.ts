import { Body, Controller, Delete, Get, HttpStatus, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { SuccessResponseDto } from '../common/success-response.dto';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { HistoryResponseDto, toHistoryEntryDto } from '../history/history-entry.dto';
import { PurgeQueryDto } from '../history/purge-query.dto';
import { CreateMemoryDto, ListMemoriesQueryDto, UpdateMemoryDto } from './dto/memory-request.dto';
import { MemoryListResponseDto, MemoryResponseDto, toMemoryDto } from './dto/memory-response.dto';
import { MemoriesService } from './memories.service';
import { ProfileInPath, ProfilePath } from '../profiles/profile-path';

const MEMORY_ID_PARAM = { name: 'memoryId', format: 'uuid' } as const;

@ApiTags('memories')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({
  description: '`profile_not_found`, `memory_not_found`',
  type: ErrorResponseDto,
})
@Controller('api/profiles/:id/memories')
export class MemoriesController {
  constructor(private readonly memories: MemoriesService) {}

  /** List memories by importance × decayFactor, then newest first. */
  @Get()
  @RequiresScope('read')
  @ApiOkResponse({ type: MemoryListResponseDto })
  @ApiBadRequestResponse({ description: '`invalid_memory_type`, `invalid_limit`', type: ErrorResponseDto })
  async listMemories(
    @ProfileInPath() id: ProfilePath,
    @Query() query: ListMemoriesQueryDto,
  ): Promise<MemoryListResponseDto> {
    const memories = await this.memories.list(id, {
      type: query.type,
      limit: query.limit,
      offset: query.offset,
      includeSuperseded: query.include === 'superseded',
    });
    return { memories: memories.map(toMemoryDto) };
  }

  /**
   * Create a memory (201). A memory whose normalised content the profile already has is not added
   * again: the existing one is returned (200) with its importance raised to the larger of the two.
   */
  @Post()
  @RequiresScope('write')
  @ApiCreatedResponse({ type: MemoryResponseDto, description: 'Created' })
  @ApiOkResponse({ type: MemoryResponseDto, description: 'The same memory existed already' })
  @ApiBadRequestResponse({
    description: '`invalid_content`, `invalid_memory_type`, `invalid_importance`, `unknown_field`',
    type: ErrorResponseDto,
  })
  async createMemory(
    @ProfileInPath() id: ProfilePath,
    @Body() body: CreateMemoryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MemoryResponseDto> {
    const { memory, created } = await this.memories.create(id, body);
    res.status(created ? HttpStatus.CREATED : HttpStatus.OK);
    return { memory: toMemoryDto(memory) };
  }

  /** One memory of this profile, current or superseded. */
  @Get(':memoryId')
  @RequiresScope('read')
  @ApiParam(MEMORY_ID_PARAM)
  @ApiOkResponse({ type: MemoryResponseDto })
  async getMemory(
    @ProfileInPath() id: ProfilePath,
    @Param('memoryId') memoryId: string,
  ): Promise<MemoryResponseDto> {
    return { memory: toMemoryDto(await this.memories.get(id, memoryId)) };
  }

  /** Change a memory's content, type or importance by hand; the change is kept in its history. */
  @Patch(':memoryId')
  @RequiresScope('write')
  @ApiParam(MEMORY_ID_PARAM)
  @ApiOkResponse({ type: MemoryResponseDto })
  @ApiBadRequestResponse({
    description:
      '`invalid_content`, `invalid_memory_type`, `invalid_importance`, `empty_update`, `unknown_field`',
    type: ErrorResponseDto,
  })
  @ApiConflictResponse({ description: '`duplicate_memory`', type: ErrorResponseDto })
  async updateMemory(
    @ProfileInPath() id: ProfilePath,
    @Param('memoryId') memoryId: string,
    @Body() body: UpdateMemoryDto,
  ): Promise<MemoryResponseDto> {
    return { memory: toMemoryDto(await this.memories.update(id, memoryId, body)) };
  }

  /** Every change of a memory, newest first: created, updated, superseded, reinforced, deleted. */
  @Get(':memoryId/history')
  @RequiresScope('read')
  @ApiParam(MEMORY_ID_PARAM)
  @ApiOkResponse({ type: HistoryResponseDto })
  async getMemoryHistory(
    @ProfileInPath() id: ProfilePath,
    @Param('memoryId') memoryId: string,
  ): Promise<HistoryResponseDto> {
    return { history: (await this.memories.historyOf(id, memoryId)).map(toHistoryEntryDto) };
  }

  /**
   * Delete a memory of this profile; the memories it had superseded are current again (or superseded
   * by what superseded it). With `purge=true` its history is purged too.
   */
  @Delete(':memoryId')
  @RequiresScope('write')
  @ApiParam(MEMORY_ID_PARAM)
  @ApiOkResponse({ type: SuccessResponseDto })
  async deleteMemory(
    @ProfileInPath() id: ProfilePath,
    @Param('memoryId') memoryId: string,
    @Query() query: PurgeQueryDto,
  ): Promise<SuccessResponseDto> {
    await this.memories.delete(id, memoryId, { purge: query.purge === 'true' });
    return { success: true };
  }
}
