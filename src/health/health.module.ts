import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MessagesModule } from '../messages/messages.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { HealthController } from './health.controller';
import { ReadinessService } from './readiness.service';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), MessagesModule, RateLimitModule],
  controllers: [HealthController],
  providers: [ReadinessService],
})
export class HealthModule {}
