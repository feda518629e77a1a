import { Module } from '@nestjs/common';
import { HistoryModule } from '../history/history.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { MemoriesController } from './memories.controller';
import { MemoriesService } from './memories.service';
import { MemoryTouches } from './memory-touches';

@Module({
  imports: [ProfilesModule, HistoryModule],
  controllers: [MemoriesController],
  providers: [MemoriesService, MemoryTouches],
  exports: [MemoriesService, MemoryTouches],
})
export class MemoriesModule {}
