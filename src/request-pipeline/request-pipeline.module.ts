import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter } from '../common/all-exceptions.filter';
import { AccessGuard } from '../access/access.guard';
import { AccessModule } from '../access/access.module';
import { createValidationPipe } from '../common/validation';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { RateLimitModule } from '../rate-limit/rate-limit.module';

/**
 * The global guards, in the order they run: rate limits first (so that requests with a wrong key are
 * limited too), then the key and its scope (AccessGuard). The proxy's front door runs the same instances in the same order.
 */
export const GLOBAL_GUARDS = [RateLimitGuard, AccessGuard];

/**
 * The global request pipeline (guards, validation, the error envelope) as providers, so that every app
 * built from AppModule runs it.
 */
@Global()
@Module({
  imports: [RateLimitModule, AccessModule],
  providers: [
    ...GLOBAL_GUARDS,
    ...GLOBAL_GUARDS.map((guard) => ({ provide: APP_GUARD, useExisting: guard })),
    { provide: APP_PIPE, useFactory: createValidationPipe },
    AllExceptionsFilter,
    { provide: APP_FILTER, useExisting: AllExceptionsFilter },
  ],
  exports: [...GLOBAL_GUARDS, AllExceptionsFilter],
})
export class RequestPipelineModule {}
