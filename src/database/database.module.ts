import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { buildDataSourceOptions } from './data-source-options';
import { EmbeddedDatabase } from './embedded-database';

export const EMBEDDED_DATABASE = Symbol('EMBEDDED_DATABASE');

/** Opens the embedded database when no DATABASE_URL is set; closes it after the data source. */
@Global()
@Module({
  providers: [
    {
      provide: EMBEDDED_DATABASE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Promise<EmbeddedDatabase> | null =>
        config.databaseUrl === null ? EmbeddedDatabase.open(config.dataDir) : null,
    },
  ],
  exports: [EMBEDDED_DATABASE],
})
export class EmbeddedDatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(EMBEDDED_DATABASE) private readonly embedded: EmbeddedDatabase | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.embedded?.close();
  }
}

@Module({
  imports: [
    EmbeddedDatabaseModule,
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG, EMBEDDED_DATABASE],
      useFactory: (config: AppConfig, embedded: EmbeddedDatabase | null) => ({
        ...buildDataSourceOptions(
          embedded ? { embedded } : { databaseUrl: config.databaseUrl!, poolSize: config.databasePoolSize },
          config.databaseAcquireTimeoutMs,
        ),
        // Fail a boot against an unreachable server in seconds, not the default half minute.
        retryAttempts: 2,
        retryDelay: 1000,
      }),
    }),
  ],
})
export class DatabaseModule {}
