import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { ApiKeyGuard } from './api-key.guard';
import { BackgroundWork } from './background-work';
import { createValidationPipe } from './validation';

/** The global request pipeline, as providers so that every app built from AppModule runs it. */
@Global()
@Module({
  providers: [
    BackgroundWork,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_PIPE, useFactory: createValidationPipe },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
  exports: [BackgroundWork],
})
export class CommonModule {}
