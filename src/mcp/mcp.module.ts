import { Module } from '@nestjs/common';
import { MemoriesModule } from '../memories/memories.module';
import { ProfileDataModule } from '../profile-data/profile-data.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { ContextModule } from '../context/context.module';
import { TraitsModule } from '../traits/traits.module';
import { McpController } from './mcp.controller';
import { MemoryToolsService } from './memory-tools.service';

/** The memory as tools for agents (Model Context Protocol) at /mcp. */
@Module({
  imports: [ProfilesModule, ProfileDataModule, MemoriesModule, TraitsModule, ContextModule],
  controllers: [McpController],
  providers: [MemoryToolsService],
})
export class McpModule {}
