import { Module } from '@nestjs/common';
import { ExtractionModule } from '../extraction/extraction.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { IngestController } from './ingest.controller';
import { IngestService } from './ingest.service';

@Module({
  imports: [ProfilesModule, TraitsModule, ExtractionModule],
  controllers: [IngestController],
  providers: [IngestService],
})
export class IngestModule {}
