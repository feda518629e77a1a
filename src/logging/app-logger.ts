import { LoggerService } from '@nestjs/common';
import type { Level, Logger as Pino } from 'pino';
import { writeLine } from '../common/request-logger';

/** Contexts of Nest's own start-up lines (one per module initialised, one per route mapped). */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** Nest's report of an error that stops start-up. */
const START_UP_FAILURE_CONTEXT = 'ExceptionHandler';
/** @nestjs/typeorm's "Unable to connect to the database. Retrying (n)...", logged with a stack. */
const CONNECT_RETRY_CONTEXT = 'TypeOrmModule';

const contextOf = (params: unknown[]): unknown => params[params.length - 1];

/**
 * Nest's logger, over another one: Nest's own start-up lines go to debug; a database connection retry
 * at boot is a warning without a stack (the error that ends the retries says what went wrong); and
 * Nest's report of an error that stops start-up is dropped, because the caller reports that error
 * (createApp sets `abortOnError: false`, so the error is thrown to main.ts or to the test instead of
 * being printed before an exit).
 */
export class AppLogger implements LoggerService {
  constructor(private readonly target: LoggerService) {}

  log(message: unknown, ...params: unknown[]): void {
    if (FRAMEWORK_CONTEXTS.has(contextOf(params) as string)) this.target.debug?.(message, ...params);
    else this.target.log(message, ...params);
  }

  error(message: unknown, ...params: unknown[]): void {
    const context = contextOf(params);
    if (context === START_UP_FAILURE_CONTEXT) return;
    if (context === CONNECT_RETRY_CONTEXT) this.target.warn(message, context);
    else this.target.error(message, ...params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.target.warn(message, ...params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.target.debug?.(message, ...params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.target.verbose?.(message, ...params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.target.fatal?.(message, ...params);
  }
}

/**
 * A Nest LoggerService writing to a pino logger: Nest's `Logger` lines, at start-up (over a synchronous
 * logger) and then the application's (over HttpLogger's root). Nest passes the context last, and for
 * errors a stack before it.
 */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly pino: Pino) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const context = params.length > 0 ? contextOf(params) : undefined;
    // error(message, stack, context): the only call with a parameter besides the context
    writeLine(
      this.pino,
      level,
      message,
      context,
      level === 'error' && params.length > 1 ? params[0] : undefined,
    );
  }
}
