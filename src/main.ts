import { Logger } from '@nestjs/common';
import { createApp } from './app.setup';
import { ConfigError, loadConfig } from './config/app-config';
import { DataDirLockedError } from './database/embedded-database';
import { GracefulShutdown } from './lifecycle/graceful-shutdown';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env); // fail before anything starts when a variable is wrong
  const app = await createApp();
  new GracefulShutdown(app, config.shutdownGraceMs).install();
  await app.listen(config.port, config.host);
  const database = config.databaseUrl ? 'PostgreSQL server' : `embedded database in ${config.dataDir}`;
  new Logger('Bootstrap').log(`Listening on ${await app.getUrl()} (${database})`);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    console.error(error.message);
  } else {
    console.error('Startup failed:', error);
  }
  process.exit(1);
});
