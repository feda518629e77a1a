import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { BackgroundWork } from './background-work';
import { ServingLoad } from './serving-load';

/** What every module may use: background work that shutdown drains, and the service's serving load. */
@Global()
@Module({
  providers: [
    BackgroundWork,
    {
      provide: ServingLoad,
      useFactory: (config: AppConfig) => new ServingLoad(config.extraction.yieldUtilization),
      inject: [APP_CONFIG],
    },
  ],
  exports: [BackgroundWork, ServingLoad],
})
export class CommonModule {}
