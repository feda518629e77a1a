import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { ApiKeyGuard } from './api-key.guard';
import { BackgroundWork } from './background-work';
import { ServingLoad } from './serving-load';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { createValidationPipe } from './validation';

/**
 * The global request pipeline, as providers so that every app built from AppModule runs it. Guards run
 * in this order: rate limits first (so that requests with a wrong key are limited too), then the key.
 */
@Global()
@Module({
  imports: [RateLimitModule],
  providers: [
    BackgroundWork,
    {
      provide: ServingLoad,
      useFactory: (config: AppConfig) => new ServingLoad(config.extraction.yieldUtilization),
      inject: [APP_CONFIG],
    },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_PIPE, useFactory: createValidationPipe },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
  exports: [BackgroundWork, ServingLoad],
})
export class CommonModule {}
