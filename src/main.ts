import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createApp, createStartupLogger } from './app.setup';
import { ConfigError, loadConfig } from './config/app-config';
import { DataDirLockedError } from './database/data-dir-lock';
import { MigrationError } from './database/migrate';
import { DatabaseUnreachableError } from './database/open-data-source';
import { GracefulShutdown } from './lifecycle/graceful-shutdown';
import {
  describeDatabase,
  describeModels,
  describeService,
  exposureWarning,
  listeningLine,
} from './lifecycle/startup-report';

/** Start-up failures an operator fixes from their message alone: one line, no stack. */
const EXPLAINED_FAILURES = [ConfigError, DataDirLockedError, MigrationError, DatabaseUnreachableError];

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env); // fail before anything starts when a variable is wrong
  const startupLogger = createStartupLogger(config);
  Logger.overrideLogger(startupLogger);
  const logger = new Logger('Bootstrap');
  logger.log(describeService());
  logger.log(describeDatabase(config));
  const app = await createApp(startupLogger);
  logger.log(describeModels(config));
  new GracefulShutdown(app, config.shutdownGraceMs).install();
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const warning = exposureWarning(config, address);
  if (warning) logger.warn(warning);
  logger.log(listeningLine(address));
}

bootstrap().catch((error: unknown) => {
  if (EXPLAINED_FAILURES.some((type) => error instanceof type)) {
    console.error((error as Error).message);
  } else {
    console.error('Startup failed:', error);
  }
  process.exit(1);
});
