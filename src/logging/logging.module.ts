import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { HttpLogger } from './http-logger';

/**
 * Structured logging: `HttpLogger` owns the pino logger and the per-request middleware (installed by
 * `configureApp` ahead of body parsing, so even a request refused there is logged with its id).
 * nestjs-pino routes Nest's `Logger` to the same pino logger and binds the request's logger to the
 * handling of each request, so every line logged meanwhile carries the request id. Options come from
 * the configuration provider (not read at import time), so each app built in a process gets its own.
 */
@Global()
@Module({
  providers: [HttpLogger],
  exports: [HttpLogger],
})
class HttpLoggerModule {}

@Module({
  imports: [
    HttpLoggerModule,
    LoggerModule.forRootAsync({
      inject: [HttpLogger],
      useFactory: (http: HttpLogger) => ({
        pinoHttp: { logger: http.root },
        useExisting: true,
      }),
    }),
  ],
})
export class LoggingModule {}
