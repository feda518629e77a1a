import { Module } from '@nestjs/common';
import { HistoryModule } from '../history/history.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitSchemaRegistry } from './trait-schema-registry';
import { TraitsController } from './traits.controller';
import { TraitsRepository } from './traits.repository';
import { TraitsService } from './traits.service';

@Module({
  imports: [ProfilesModule, HistoryModule],
  controllers: [TraitsController],
  providers: [TraitsService, TraitsRepository, TraitSchemaRegistry],
  exports: [TraitsService, TraitsRepository, TraitSchemaRegistry],
})
export class TraitsModule {}
