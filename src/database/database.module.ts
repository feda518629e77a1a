import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { buildDataSourceOptions } from './data-source-options';
import { EmbeddedDatabase } from './embedded-database';
import { MigrationError } from './migrate';
import { DatabaseOptions, openMigratedDataSource } from './open-data-source';
import { ProfileChangeFeed } from './profile-changes';

export const EMBEDDED_DATABASE = Symbol('EMBEDDED_DATABASE');

/**
 * Opens the embedded database when no DATABASE_URL is set (closing it after the data source), and
 * holds the feed of profile changes that the pools' connections listen for.
 */
@Global()
@Module({
  providers: [
    {
      provide: EMBEDDED_DATABASE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Promise<EmbeddedDatabase> | null =>
        config.databaseUrl === null ? EmbeddedDatabase.open(config.dataDir) : null,
    },
    ProfileChangeFeed,
  ],
  exports: [EMBEDDED_DATABASE, ProfileChangeFeed],
})
export class EmbeddedDatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(EMBEDDED_DATABASE) private readonly embedded: EmbeddedDatabase | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.embedded?.close();
  }
}

/** The app's data source (the entities are the app's, given by AppModule), migrated before use. */
@Module({})
export class DatabaseModule {
  static forRoot(entities: DataSourceOptions['entities']): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        EmbeddedDatabaseModule,
        TypeOrmModule.forRootAsync({
          inject: [APP_CONFIG, EMBEDDED_DATABASE, ProfileChangeFeed],
          useFactory: (
            config: AppConfig,
            embedded: EmbeddedDatabase | null,
            changes: ProfileChangeFeed,
          ): DatabaseOptions => ({
            ...buildDataSourceOptions(
              embedded
                ? { embedded }
                : { databaseUrl: config.databaseUrl!, poolSize: config.databasePoolSize },
              { entities, acquireTimeoutMs: config.databaseAcquireTimeoutMs, client: changes.Client },
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
    };
  }
}
