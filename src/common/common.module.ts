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
 * The global guards, in the order they run: rate limits first (so that requests with a wrong key are
 * limited too), then the key. The proxy's front door runs the same instances in the same order.
 */
export const GLOBAL_GUARDS = [RateLimitGuard, ApiKeyGuard];

/** The global request pipeline, as providers so that every app built from AppModule runs it. */
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
    ...GLOBAL_GUARDS,
    ...GLOBAL_GUARDS.map((guard) => ({ provide: APP_GUARD, useExisting: guard })),
    { provide: APP_PIPE, useFactory: createValidationPipe },
    AllExceptionsFilter,
    { provide: APP_FILTER, useExisting: AllExceptionsFilter },
  ],
  exports: [BackgroundWork, ServingLoad, ...GLOBAL_GUARDS, AllExceptionsFilter],
})
export class CommonModule {}
