import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { BackgroundWork } from './background-work';
import { JsonParseThread } from './json-parse-thread';
import { ServingLoad } from './serving-load';

/**
 * What every module may use: background work that shutdown drains, the service's serving load, and the
 * thread that parses large bodies.
 */
@Global()
@Module({
  providers: [
    BackgroundWork,
    { provide: JsonParseThread, useFactory: () => new JsonParseThread() },
    {
      provide: ServingLoad,
      useFactory: (config: AppConfig) => new ServingLoad(config.extraction.yieldUtilization),
      inject: [APP_CONFIG],
    },
  ],
  exports: [BackgroundWork, ServingLoad, JsonParseThread],
})
export class CommonModule {}
