import { Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../common/public.decorator';
import { NoRateLimit } from '../common/rate-limit.decorator';
import { LivenessDto } from './dto/health-response.dto';
import { ReadinessService } from './readiness.service';

@ApiTags('health')
@Public()
@NoRateLimit()
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process answers. Checks nothing external. */
  @Get('health')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: LivenessDto })
  health(): LivenessDto {
    return { status: 'ok' };
  }

  /** Readiness: the database answers within its timeout (Terminus format; 503 when it does not). */
  @Get('ready')
  @HealthCheck()
  @ApiServiceUnavailableResponse({ description: 'The database did not answer in time (Terminus format)' })
  ready(): Promise<HealthCheckResult> {
    return this.readiness.check();
  }
}
