import { Module } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { ContextController } from './context.controller';
import { ContextService } from './context.service';

/** What reaches the model: the context the proxy injects, and the endpoint that shows it. */
@Module({
  imports: [ProfilesModule, TraitsModule, EmbeddingsModule],
  controllers: [ContextController],
  providers: [ContextService, PreparedStatements],
  exports: [ContextService],
})
export class ContextModule {}
