import { Module } from '@nestjs/common';
import { APP_ENTITIES } from './app-entities';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { CommonModule } from './common/common.module';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { EmbeddedMaintenanceModule } from './database/embedded-maintenance.module';
import { JobLeasesModule } from './database/job-leases.module';
import { EmbeddingsModule } from './embeddings/embeddings.module';
import { ExtractionModule } from './extraction/extraction.module';
import { HealthModule } from './health/health.module';
import { HomeModule } from './home/home.module';
import { IngestModule } from './ingest/ingest.module';
import { LoggingModule } from './logging/logging.module';
import { MemoryDecayModule } from './memories/memory-decay.module';
import { MemoriesModule } from './memories/memories.module';
import { MetricsModule } from './metrics/metrics.module';
import { ProfileDataModule } from './profile-data/profile-data.module';
import { ProfilesModule } from './profiles/profiles.module';
import { ProxyModule } from './proxy/proxy.module';
import { McpModule } from './mcp/mcp.module';
import { RequestPipelineModule } from './request-pipeline/request-pipeline.module';
import { TraitsModule } from './traits/traits.module';
import { UpstreamModule } from './upstream/upstream.module';

@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    MetricsModule,
    DatabaseModule.forRoot(APP_ENTITIES),
    JobLeasesModule,
    EmbeddedMaintenanceModule,
    EventEmitterModule.forRoot(),
    CommonModule,
    RequestPipelineModule,
    HealthModule,
    HomeModule,
    ProfilesModule,
    ProfileDataModule,
    TraitsModule,
    MemoriesModule,
    MemoryDecayModule,
    EmbeddingsModule,
    ExtractionModule,
    IngestModule,
    UpstreamModule,
    ProxyModule,
    McpModule,
  ],
})
export class AppModule {}
