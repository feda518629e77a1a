import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { buildDataSourceOptions } from './data-source-options';
import { EmbeddedDatabase } from './embedded-database';
import { MigrationError } from './migrate';
import { DatabaseOptions, openMigratedDataSource } from './open-data-source';

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
      useFactory: (config: AppConfig, embedded: EmbeddedDatabase | null): DatabaseOptions => ({
        ...buildDataSourceOptions(
          embedded ? { embedded } : { databaseUrl: config.databaseUrl!, poolSize: config.databasePoolSize },
          config.databaseAcquireTimeoutMs,
        ),
        migrationLockTimeoutMs: config.migrationLockTimeoutMs,
        // Fail a boot against an unreachable server in seconds, not the default half minute; a failed
        // migration is not a connection problem and is not retried.
        retryAttempts: 2,
        retryDelay: 1000,
        toRetry: (error: unknown) => !(error instanceof MigrationError),
      }),
      dataSourceFactory: openMigratedDataSource,
    }),
  ],
})
export class DatabaseModule {}
