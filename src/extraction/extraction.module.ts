import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ContextModule } from '../context/context.module';
import { HistoryModule } from '../history/history.module';
import { MemoriesModule } from '../memories/memories.module';
import { MetricsService } from '../metrics/metrics.service';
import { ProfilesModule } from '../profiles/profiles.module';
import { TraitsModule } from '../traits/traits.module';
import { UpstreamClient } from '../upstream/upstream-client';
import { ExtractedTraitWriter } from './extracted-trait-writer';
import { ExtractionListener } from './extraction.listener';
import { ExtractionService } from './extraction.service';
import { ExtractionWorker } from './extraction-worker';
import { LlmChat } from './llm-chat';
import { LlmExtractor } from './llm-extractor';
import { ExtractionAdminService } from './extraction-admin.service';
import { ExtractionQueue } from './extraction-queue';
import { ExtractionController } from './extraction.controller';
import { SummaryService } from './summary.service';

/** The client of the extraction LLM: separate from the proxy's, with its own settings (LLM_*). */
export const EXTRACTION_LLM_CLIENT = Symbol('EXTRACTION_LLM_CLIENT');

@Module({
  imports: [TraitsModule, MemoriesModule, ProfilesModule, HistoryModule, ContextModule],
  controllers: [ExtractionController],
  providers: [
    {
      provide: EXTRACTION_LLM_CLIENT,
      inject: [APP_CONFIG, MetricsService],
      useFactory: (config: AppConfig, metrics: MetricsService) =>
        new UpstreamClient({
          baseUrl: config.llm.baseUrl,
          apiKey: config.llm.apiKey ?? undefined,
          timeoutMs: config.extraction.llmTimeoutMs,
          streamIdleTimeoutMs: config.extraction.llmTimeoutMs,
          provider: 'openai',
          maxConnections: 64,
          observer: metrics.upstreamObserver('extraction'),
        }),
    },
    {
      provide: LlmChat,
      inject: [APP_CONFIG, EXTRACTION_LLM_CLIENT],
      useFactory: (config: AppConfig, client: UpstreamClient) =>
        new LlmChat(client, { model: config.llm.model, timeoutMs: config.extraction.llmTimeoutMs }),
    },
    {
      provide: LlmExtractor,
      inject: [APP_CONFIG, LlmChat],
      useFactory: (config: AppConfig, chat: LlmChat) =>
        new LlmExtractor(chat, {
          attempts: config.extraction.llmAttempts,
          retryBaseMs: config.extraction.retryBaseMs,
        }),
    },
    ExtractionService,
    ExtractedTraitWriter,
    SummaryService,
    ExtractionQueue,
    ExtractionAdminService,
    ExtractionWorker,
    ExtractionListener,
  ],
  exports: [ExtractionService, SummaryService, ExtractionWorker],
})
export class ExtractionModule implements OnApplicationShutdown {
  constructor(@Inject(EXTRACTION_LLM_CLIENT) private readonly client: UpstreamClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.destroy();
  }
}
