import { Global, Module } from '@nestjs/common';
import { HttpLogger } from './http-logger';

/**
 * Structured logging: `HttpLogger` owns the pino logger and the per-request middleware (installed by
 * `configureApp` ahead of body parsing, so even a request refused there is logged with its id).
 * configureApp routes Nest's `Logger` to the same pino logger; code that handles a request logs about
 * it through `requestLogger(req, context)`, whose lines carry the request id. Options come from the
 * configuration provider (not read at import time), so each app built in a process gets its own.
 */
@Global()
@Module({
  providers: [HttpLogger],
  exports: [HttpLogger],
})
export class LoggingModule {}
