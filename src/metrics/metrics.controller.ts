import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { contentType as PROMETHEUS_CONTENT_TYPE } from 'prom-client';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { NoRateLimit } from '../common/rate-limit.decorator';
import { MetricsService } from './metrics.service';

@ApiTags('operations')
@RequiresApiKey()
@RequiresScope('root')
@NoRateLimit()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /** Prometheus metrics in the text exposition format. Needs the API key when SERVICE_API_KEY is set. */
  @Get()
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format 0.0.4', schema: { type: 'string' } })
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
