import { Module } from '@nestjs/common';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitSchemaRegistry } from './trait-schema-registry';
import { TraitsController } from './traits.controller';
import { TraitsService } from './traits.service';

@Module({
  imports: [ProfilesModule],
  controllers: [TraitsController],
  providers: [TraitsService, TraitSchemaRegistry],
  exports: [TraitsService, TraitSchemaRegistry],
})
export class TraitsModule {}
