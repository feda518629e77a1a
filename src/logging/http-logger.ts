import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import { AppConfig } from '../config/app-config';
import { REQUEST_LOG, RequestLog } from '../common/request-logger';
import { routePattern } from '../common/route-pattern';
import { repeatedWarnings } from '../common/warning-fold';
import { APP_CONFIG } from '../config/config.module';
import { REDACTED, REDACTED_PATHS } from './log-redaction';
import { assignRequestId } from './request-id';

export const SERVICE_NAME = 'profile-memory-service';

/** Express-style middleware: `next` goes on with the request's handling. */
export type RequestLogMiddleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * The process's one pino logger and the HTTP middleware built on it. The middleware gives every request
 * its id (on the lines its handling logs through `requestLogger`) and writes one line per request, at
 * its end, with method, URL, route, status and duration. Headers and bodies are never logged.
 */
@Injectable()
export class HttpLogger {
  readonly root: Logger;
  readonly middleware: RequestLogMiddleware;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const loggers = createLoggers(config);
    this.root = loggers.root;
    this.middleware = requestLog(loggers.root, loggers.requestLines, loggers.readable);
  }
}

/**
 * Gives the request its id and what its child logger is made from (`REQUEST_LOG`: `requestLogger` makes
 * it when the handling first logs, since most requests log nothing but their line and a child of the
 * censoring root costs a few µs), and writes the request's line when its response closes. The line's
 * fields are serialised only when it is written; `readable` (LOG_PRETTY) makes it one short text line.
 */
export function requestLog(root: Logger, requestLines: Logger, readable = false): RequestLogMiddleware {
  return (req, res, next) => {
    const started = Date.now();
    const requestId = assignRequestId(req, res);
    Object.assign(req, { id: requestId, [REQUEST_LOG]: { root, requestId } satisfies RequestLog });
    // a response closes once, whether it was sent whole or not
    const write = readable ? writeReadableRequestLine : writeRequestLine;
    res.on('close', () => write(requestLines, requestId, req, res, Date.now() - started));
    next();
  };
}

/**
 * One line per request: `request completed`, or `request failed` for a 5xx, at warn for the first 5xx
 * of its status and route in an interval and at info for the others (repeatedWarnings counts them and
 * says how many when the interval ends), so that an outage does not flood the warnings. A 5xx is a warning
 * because most are a dependency's trouble (an upstream's own 500 relayed, an LLM that gave no usable
 * answer); a bug is logged at error, with its stack and error id, where it is caught
 * (AllExceptionsFilter). `completed` says whether the response was sent whole.
 */
function writeRequestLine(
  log: Logger,
  requestId: string,
  req: IncomingMessage,
  res: ServerResponse,
  durationMs: number,
): void {
  const failed = res.statusCode >= 500;
  const route = routePattern(req) ?? undefined;
  const level =
    failed &&
    repeatedWarnings.admit(`request failed: ${res.statusCode} ${req.method} ${route ?? '(no route)'}`)
      ? 'warn'
      : 'info';
  if (!log.isLevelEnabled(level)) return;
  log[level](
    {
      requestId,
      req: serializeRequest(req),
      res: serializeResponse(res),
      durationMs,
      route,
      completed: res.writableFinished,
    },
    failed ? 'request failed' : 'request completed',
  );
}

/**
 * The readable form of the request's line (LOG_PRETTY): `GET /health 200 2 ms req <id>`, at the same
 * levels, with ` (not sent whole)` when the response was cut short.
 */
function writeReadableRequestLine(
  log: Logger,
  requestId: string,
  req: IncomingMessage,
  res: ServerResponse,
  durationMs: number,
): void {
  const level = res.statusCode >= 500 ? 'warn' : 'info';
  if (!log.isLevelEnabled(level)) return;
  const url = (req as Request).originalUrl ?? req.url;
  const cut = res.writableFinished ? '' : ' (not sent whole)';
  log[level](`${req.method} ${url} ${res.statusCode} ${durationMs} ms req ${requestId}${cut}`);
}

/**
 * A pino logger as configured (LOG_LEVEL, LOG_PRETTY). The application's logger and the start-up logger
 * (createApp) are both made here; the start-up one writes synchronously, so that its lines come out
 * while the event loop is blocked and before the application logger's.
 * Lines are JSON on stdout; with LOG_PRETTY, one readable line each, printed in this thread
 * (pino-pretty as a synchronous stream, not a worker transport, whose last lines before an exit are
 * lost).
 */
export function createRootLogger(config: AppConfig, { sync = false } = {}): Logger {
  return createLoggers(config, { sync }).root;
}

/**
 * The root logger, whose lines pino censors at REDACTED_PATHS, and on the same stream the logger of the
 * request lines, which skips the censoring: a request line is made only of the fields serializeRequest
 * and serializeResponse pick (no header, body or secret-named field), so there is nothing for it to
 * censor, and walking the paths for every request cost about a tenth of a proxied chat's CPU.
 */
export function createLoggers(
  config: AppConfig,
  { sync = false, stream }: { sync?: boolean; stream?: DestinationStream } = {},
): { root: Logger; requestLines: Logger; readable: boolean } {
  let options: LoggerOptions = {
    name: SERVICE_NAME,
    level: config.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  let destination = stream ?? null;
  let readable = false;
  if (!destination && config.logPretty) {
    destination = prettyPrinter();
    readable = destination !== null;
    // pino-pretty reads numeric levels
    if (readable) options = { ...options, formatters: undefined };
  }
  destination ??= pino.destination({ dest: 1, sync });
  return {
    root: pino({ ...options, redact: { paths: REDACTED_PATHS, censor: REDACTED } }, destination),
    requestLines: pino(options, destination),
    readable,
  };
}

/** pino-pretty, a dev dependency: null (and a note) when it is not installed. */
function prettyPrinter(): DestinationStream | null {
  let build: (options: object) => DestinationStream;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional: absent in production images
    build = require('pino-pretty') as typeof build;
  } catch {
    process.stderr.write('LOG_PRETTY is set but pino-pretty is not installed; logging JSON\n');
    return null;
  }
  return build({
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name,context',
    messageFormat: '{if context}{context}: {end}{msg}',
  });
}

function serializeRequest(req: IncomingMessage): object {
  const express = req as Request;
  const userAgent = req.headers['user-agent'];
  return {
    method: req.method,
    url: express.originalUrl ?? req.url,
    remoteAddress: express.ip ?? req.socket?.remoteAddress,
    userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 200) : undefined,
  };
}

function serializeResponse(res: ServerResponse): object {
  const contentLength = (res as Response).getHeader?.('content-length');
  return { statusCode: res.statusCode, contentLength };
}
