import { Body, Controller, Delete, Get, HttpStatus, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey } from '../common/public.decorator';
import { SuccessResponseDto } from '../common/success-response.dto';
import { PROFILE_ID_PARAM } from '../profiles/profiles.controller';
import { CreateMemoryDto, ListMemoriesQueryDto } from './dto/memory-request.dto';
import { MemoryListResponseDto, MemoryResponseDto, toMemoryDto } from './dto/memory-response.dto';
import { MemoriesService } from './memories.service';

@ApiTags('memories')
@RequiresApiKey()
@ApiParam(PROFILE_ID_PARAM)
@ApiNotFoundResponse({
  description: '`profile_not_found` (or `memory_not_found` on delete)',
  type: ErrorResponseDto,
})
@Controller('api/profiles/:id/memories')
export class MemoriesController {
  constructor(private readonly memories: MemoriesService) {}

  /** List memories by importance × decayFactor, then newest first. */
  @Get()
  @ApiOkResponse({ type: MemoryListResponseDto })
  @ApiBadRequestResponse({ description: '`invalid_memory_type`, `invalid_limit`', type: ErrorResponseDto })
  async listMemories(
    @Param('id') id: string,
    @Query() query: ListMemoriesQueryDto,
  ): Promise<MemoryListResponseDto> {
    return { memories: (await this.memories.list(id, query)).map(toMemoryDto) };
  }

  /**
   * Create a memory (201). A memory whose normalised content the profile already has is not added
   * again: the existing one is returned (200) with its importance raised to the larger of the two.
   */
  @Post()
  @ApiCreatedResponse({ type: MemoryResponseDto, description: 'Created' })
  @ApiOkResponse({ type: MemoryResponseDto, description: 'The same memory existed already' })
  @ApiBadRequestResponse({
    description: '`invalid_content`, `invalid_memory_type`, `invalid_importance`, `unknown_field`',
    type: ErrorResponseDto,
  })
  async createMemory(
    @Param('id') id: string,
    @Body() body: CreateMemoryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MemoryResponseDto> {
    const { memory, created } = await this.memories.create(id, body);
    res.status(created ? HttpStatus.CREATED : HttpStatus.OK);
    return { memory: toMemoryDto(memory) };
  }

  /** Delete a memory of this profile. */
  @Delete(':memoryId')
  @ApiParam({ name: 'memoryId', format: 'uuid' })
  @ApiOkResponse({ type: SuccessResponseDto })
  async deleteMemory(
    @Param('id') id: string,
    @Param('memoryId') memoryId: string,
  ): Promise<SuccessResponseDto> {
    await this.memories.delete(id, memoryId);
    return { success: true };
  }
}
