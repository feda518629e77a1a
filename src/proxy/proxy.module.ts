import { Module } from '@nestjs/common';
import { ContextModule } from '../context/context.module';
import { ExtractionModule } from '../extraction/extraction.module';
import { MemoriesModule } from '../memories/memories.module';
import { MessagesModule } from '../messages/messages.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { UpstreamExchanges } from './exchanges/upstream-exchanges';
import { PassThrough } from './pass-through';
import { ProxyController } from './proxy.controller';
import { ProxyFrontDoor } from './proxy-front-door';
import { RelayPipeline } from './relay-pipeline';
import { UpstreamCaller } from './upstream-caller';

@Module({
  imports: [ProfilesModule, TraitsModule, MemoriesModule, MessagesModule, ContextModule, ExtractionModule],
  controllers: [ProxyController],
  providers: [RelayPipeline, UpstreamExchanges, UpstreamCaller, PassThrough, ProxyFrontDoor],
})
export class ProxyModule {}
