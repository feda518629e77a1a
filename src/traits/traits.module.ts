import { Module } from '@nestjs/common';
import { HistoryModule } from '../history/history.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitSchemaRegistry } from './trait-schema-registry';
import { TraitsController } from './traits.controller';
import { TraitsService } from './traits.service';

@Module({
  imports: [ProfilesModule, HistoryModule],
  controllers: [TraitsController],
  providers: [TraitsService, TraitSchemaRegistry],
  exports: [TraitsService, TraitSchemaRegistry],
})
export class TraitsModule {}
