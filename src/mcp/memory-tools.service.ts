import { Injectable } from '@nestjs/common';
import { CreateMemoryDto } from '../memories/dto/memory-request.dto';
import { toMemoryDto } from '../memories/dto/memory-response.dto';
import { MemoriesService } from '../memories/memories.service';
import { MemoryType } from '../memories/memory.entity';
import { toProfileDetailsResponse } from '../profile-data/dto/profile-data-response.dto';
import { ProfileDataService } from '../profile-data/profile-data.service';
import type { ProfilePath } from '../profiles/profile-path';
import { ProfilesService } from '../profiles/profiles.service';
import type { McpUser } from './memory-tools';
import { ContextService } from '../context/context.service';
import { toContextMemoryDto } from '../context/dto/context.dto';
import { toTraitDto } from '../traits/dto/trait-response.dto';
import { TraitsService } from '../traits/traits.service';

/**
 * What the MCP tools do, for the user of the request (created on first use, as the proxy does), through
 * the same services as the management API, so the same checks and the same response shapes apply.
 */
@Injectable()
export class MemoryToolsService {
  constructor(
    private readonly profiles: ProfilesService,
    private readonly profileData: ProfileDataService,
    private readonly memories: MemoriesService,
    private readonly traits: TraitsService,
    private readonly context: ContextService,
  ) {}

  async search(user: McpUser, query: string, limit: number) {
    await this.profiles.getOrCreate(user.applicationId, user.userId);
    const ranked = await this.context.searchMemories(user.applicationId, user.userId, query, limit);
    return {
      memories: ranked.map(toContextMemoryDto),
    };
  }

  async remember(userId: McpUser, content: string, type: MemoryType, importance: number) {
    const profileId = await this.profileIdOf(userId);
    const memory: CreateMemoryDto = { content, type, importance };
    const stored = await this.memories.create(profileId, memory, 'mcp');
    return { memory: toMemoryDto(stored.memory), created: stored.created };
  }

  async forget(userId: McpUser, memoryId: string) {
    await this.memories.delete(await this.profileIdOf(userId), memoryId, { source: 'mcp' });
    return { deleted: true, memoryId };
  }

  async profile(userId: McpUser) {
    return toProfileDetailsResponse(await this.profileData.details(await this.profileIdOf(userId)));
  }

  async setTrait(userId: McpUser, key: string, value: unknown) {
    const profileId = await this.profileIdOf(userId);
    return { trait: toTraitDto(await this.traits.putManual(profileId, key, value, 1, 'mcp')) };
  }

  /** The user's profile (created on first use) as a path within the user's application. */
  private async profileIdOf(user: McpUser): Promise<ProfilePath> {
    const { profile } = await this.profiles.getOrCreate(user.applicationId, user.userId);
    return { applicationId: user.applicationId, pathId: profile.id, actor: user.actor };
  }
}
