import { Module } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { MemoriesModule } from '../memories/memories.module';
import { MessagesModule } from '../messages/messages.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { ContextService } from './context.service';
import { UpstreamExchanges } from './exchanges/upstream-exchanges';
import { PassThrough } from './pass-through';
import { ProxyController } from './proxy.controller';
import { RelayPipeline } from './relay-pipeline';
import { UpstreamCaller } from './upstream-caller';

@Module({
  imports: [ProfilesModule, TraitsModule, MemoriesModule, MessagesModule, EmbeddingsModule],
  controllers: [ProxyController],
  providers: [
    RelayPipeline,
    UpstreamExchanges,
    UpstreamCaller,
    PassThrough,
    ContextService,
    PreparedStatements,
  ],
  exports: [ContextService],
})
export class ProxyModule {}
