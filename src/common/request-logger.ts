import { Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { Level, Logger as Pino } from 'pino';

/** What code that handles a request logs through: the methods of Nest's `Logger` that it uses. */
export interface LineWriter {
  log(message: unknown): void;
  warn(message: unknown): void;
  error(message: unknown, stack?: string): void;
  debug(message: unknown): void;
}

/**
 * One line, as Nest's `Logger` lines are written to pino: its context, and an error as pino serialises
 * errors (`err`: type, message, stack), whether it came as an Error or as `error(message, stack)`.
 */
export function writeLine(
  pino: Pino,
  level: Level,
  message: unknown,
  context: unknown,
  stack?: unknown,
): void {
  if (!pino.isLevelEnabled(level)) return;
  const fields: Record<string, unknown> = {};
  if (context !== undefined) fields.context = context;
  if (level === 'error' && typeof stack === 'string' && /\n\s*at /.test(stack)) {
    const err = new Error(String(message));
    err.stack = stack;
    pino.error({ ...fields, err }, err.message);
  } else if (message instanceof Error) pino[level]({ ...fields, err: message }, message.message);
  else if (typeof message === 'object' && message !== null) pino[level]({ ...fields, ...message });
  else pino[level](fields, String(message));
}

/**
 * Where the request-log middleware leaves, on each request, what the request's logger is made from: the
 * root logger and the request's id, and the child logger once made. A data property of the same shape on
 * every request (an accessor made per request would give each request object a shape of its own).
 */
export const REQUEST_LOG = Symbol('request log');

export interface RequestLog {
  root: Pino;
  requestId: string;
  child?: Pino;
}

/**
 * The lines that code handling `req` logs about it, under `context` (as `new Logger(context)` names
 * them), written through the request's logger (made from REQUEST_LOG, set by the request-log middleware): each
 * carries the request's id. The request is passed, not found from the call stack: binding it to the
 * handling (AsyncLocalStorage) made every promise of the process pay a hook on Node 20, a sixth of a
 * proxied chat's CPU. Lines logged through `new Logger(...)` are the process's own (background work,
 * a dependency's trouble) and carry no request id.
 */
export function requestLogger(req: IncomingMessage, context: string): LineWriter {
  const log = (req as IncomingMessage & { [REQUEST_LOG]?: RequestLog })[REQUEST_LOG];
  if (!log) return new Logger(context);
  const pino = (log.child ??= log.root.child({ requestId: log.requestId }));
  return {
    log: (message: unknown) => writeLine(pino, 'info', message, context),
    warn: (message: unknown) => writeLine(pino, 'warn', message, context),
    error: (message: unknown, stack?: string) => writeLine(pino, 'error', message, context, stack),
    debug: (message: unknown) => writeLine(pino, 'debug', message, context),
  };
}
