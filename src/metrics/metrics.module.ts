import { Global, Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';
import { ScrapeTimeGauges } from './scrape-time-gauges';

/** Prometheus metrics at /metrics; `MetricsService` is global so any module can report to it. */
@Global()
@Module({
  imports: [MessagesModule],
  controllers: [MetricsController],
  providers: [MetricsService, ScrapeTimeGauges],
  exports: [MetricsService],
})
export class MetricsModule {}
