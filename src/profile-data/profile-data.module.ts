import { Module } from '@nestjs/common';
import { HistoryModule } from '../history/history.module';
import { LearningStateReader } from '../messages/learning-state';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { ProfileDataController } from './profile-data.controller';
import { ProfileDataService } from './profile-data.service';

/** A profile with everything it holds: details, export and erasure. */
@Module({
  imports: [ProfilesModule, TraitsModule, HistoryModule],
  controllers: [ProfileDataController],
  providers: [ProfileDataService, LearningStateReader],
  exports: [ProfileDataService],
})
export class ProfileDataModule {}
