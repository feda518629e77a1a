import { Module } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { AnthropicRelay } from './anthropic-relay';
import { ContextService } from './context.service';
import { ConversationRecorder } from './conversation-recorder';
import { OpenAiRelay } from './openai-relay';
import { ProxyController } from './proxy.controller';
import { ProxyService } from './proxy.service';

@Module({
  imports: [ProfilesModule, TraitsModule, EmbeddingsModule],
  controllers: [ProxyController],
  providers: [
    ProxyService,
    ContextService,
    ConversationRecorder,
    OpenAiRelay,
    AnthropicRelay,
    PreparedStatements,
  ],
})
export class ProxyModule {}
