import { CanActivate, ForbiddenException, HttpStatus, Injectable, RequestMethod, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HOST_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModuleRef } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AllExceptionsFilter } from '../common/all-exceptions.filter';
import { ApiError } from '../common/api-error';
import { GLOBAL_GUARDS } from '../request-pipeline/request-pipeline.module';
import { requestLogger } from '../common/request-logger';
import { ProxyController } from './proxy.controller';

/** What Express gives every request and response it handles (its `app.request` and `app.response`). */
interface ExpressPrototypes {
  request: object;
  response: object;
}

/** A proxy route the front door answers: its path, the controller method that serves it, its status. */
interface DirectRoute {
  path: string;
  method: (body: unknown, req: Request, res: Response) => Promise<void>;
  /** What Nest sets before calling the method: `@HttpCode`, else 201 for POST. */
  statusCode: number;
}

/** Route metadata that makes Nest do more than the front door does: such a route stays with Nest. */
const METHOD_EXTRAS = [
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  PIPES_METADATA,
  HEADERS_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
];
const CLASS_EXTRAS = [
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  PIPES_METADATA,
  VERSION_METADATA,
  HOST_METADATA,
];

/**
 * The proxy's POST routes, served from the HTTP server ahead of Express's router and Nest's route
 * handling, which together cost a proxied chat 10 to 13 % of its CPU. A request runs the same
 * steps in the same order: the edge middleware that configureApp gives Express (request id and log
 * line, metrics, security headers, CORS, body parsing), the global guards (rate limit, API key) with
 * the controller's own metadata, the controller's method, and any error through the global exception
 * filter.
 *
 * Only exact matches are taken: `POST` to a route's path as the controller declares it, with any query.
 * Everything else (another case, a trailing slash, a method that is not POST, a route whose parameters
 * are not the raw body, request and response, or that has its own guards, interceptors, filters, pipes,
 * headers or version) goes to Express, where the same controller serves it.
 */
@Injectable()
export class ProxyFrontDoor {
  private readonly routes: Map<string, DirectRoute>;

  constructor(
    private readonly filter: AllExceptionsFilter,
    private readonly moduleRef: ModuleRef,
  ) {
    this.routes = new Map(directRoutes(ProxyController).map((route) => [route.path, route]));
  }

  /**
   * Puts the front door between the HTTP server and Express. `edge` is the middleware that Express
   * runs first for every request, in its order.
   */
  open(app: NestExpressApplication, edge: RequestHandler[]): void {
    const server: Server = app.getHttpServer();
    const express = app.getHttpAdapter().getInstance() as ExpressPrototypes;
    const controller = this.moduleRef.get(ProxyController); // controllers cannot be injected
    const guards = GLOBAL_GUARDS.map((guard: Type<CanActivate>) =>
      this.moduleRef.get(guard, { strict: false }),
    );
    const fallbacks = server.listeners('request') as Array<
      (req: IncomingMessage, res: ServerResponse) => void
    >;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const route = req.method === 'POST' ? this.routes.get(pathOf(req.url)) : undefined;
      if (route === undefined) {
        for (const fallback of fallbacks) fallback.call(server, req, res);
        return;
      }
      const request = adopt(express, req, res);
      const response = request.res!;
      runChain(edge, request, response, (error) => {
        if (error !== undefined) return this.fail(error, route, request, response);
        // matched only now: Express sets the route (the log line's and the metrics' label) when its
        // router reaches it, which a request the edge refused never does
        (request as { route?: unknown }).route = { path: route.path };
        this.handle(controller, guards, route, request, response).catch((failure: unknown) =>
          this.fail(failure, route, request, response),
        );
      });
    });
  }

  private async handle(
    controller: ProxyController,
    guards: CanActivate[],
    route: DirectRoute,
    req: Request,
    res: Response,
  ): Promise<void> {
    const context = new ExecutionContextHost([req, res, noNext], ProxyController, route.method);
    for (const guard of guards) {
      // Nest's own answer to a guard that returns false
      if (!(await guard.canActivate(context))) throw new ForbiddenException('Forbidden resource');
    }
    res.status(route.statusCode);
    await route.method.call(controller, req.body, req, res);
  }

  private fail(error: unknown, route: DirectRoute, req: Request, res: Response): void {
    try {
      this.filter.catch(error, new ExecutionContextHost([req, res, noNext], ProxyController, route.method));
    } catch (failure) {
      // the filter is the last word; if it fails, the request must still end
      requestLogger(req, 'ProxyFrontDoor').error(
        `the exception filter failed on ${route.path}`,
        (failure as Error)?.stack,
      );
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const error = new ApiError(
        HttpStatus.INTERNAL_SERVER_ERROR,
        'internal_error',
        'An unexpected error occurred.',
      );
      res.status(error.status).json(error.toEnvelope());
    }
  }
}

/**
 * The controller's POST methods whose parameters are exactly `@Body() body: unknown, @Req(), @Res()`:
 * nothing for Nest's pipes to validate or transform, the response written by the method itself.
 */
export function directRoutes(type: Type<unknown>): DirectRoute[] {
  const prefix = (Reflect.getMetadata(PATH_METADATA, type) as string | undefined) ?? '';
  const routes: DirectRoute[] = [];
  for (const name of Object.getOwnPropertyNames(type.prototype)) {
    const method = (type.prototype as Record<string, unknown>)[name];
    if (typeof method !== 'function' || name === 'constructor') continue;
    if (Reflect.getMetadata(METHOD_METADATA, method) !== RequestMethod.POST) continue;
    if (!takesRawBodyRequestResponse(type, name) || hasExtras(type, method)) continue;
    const path = joinPath(prefix, (Reflect.getMetadata(PATH_METADATA, method) as string | undefined) ?? '');
    const statusCode = (Reflect.getMetadata(HTTP_CODE_METADATA, method) as number | undefined) ?? 201;
    routes.push({ path, method: method as DirectRoute['method'], statusCode });
  }
  return routes;
}

function hasExtras(type: Type<unknown>, method: object): boolean {
  const declared = (target: object, key: string) => {
    const value: unknown = Reflect.getMetadata(key, target);
    return value !== undefined && !(Array.isArray(value) && value.length === 0);
  };
  return (
    METHOD_EXTRAS.some((key) => declared(method, key)) ||
    CLASS_EXTRAS.some((key) => declared(type, key)) ||
    Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, type, (method as { name: string }).name) !== undefined
  );
}

function takesRawBodyRequestResponse(type: Type<unknown>, name: string): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, type, name) ?? {}) as Record<
    string,
    { index: number; data?: unknown; pipes?: unknown[] }
  >;
  const expected: Record<number, string> = {
    0: String(RouteParamtypes.BODY),
    1: String(RouteParamtypes.REQUEST),
    2: String(RouteParamtypes.RESPONSE),
  };
  const entries = Object.entries(args);
  if (entries.length !== 3) return false;
  const types = (Reflect.getMetadata('design:paramtypes', type.prototype as object, name) ?? []) as unknown[];
  if (types[0] !== Object) return false; // a typed body would be validated by the global pipe
  return entries.every(([key, { index, data, pipes }]) => {
    const kind = key.split(':')[0];
    return expected[index] === kind && data === undefined && (pipes?.length ?? 0) === 0;
  });
}

function joinPath(...parts: string[]): string {
  return (
    '/' +
    parts
      .map((part) => part.replace(/^\/+|\/+$/g, ''))
      .filter((part) => part !== '')
      .join('/')
  );
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * The request and response as Express hands them to its middleware: Express's prototypes (`req.ip`
 * with TRUST_PROXY, `res.status`, `res.json`) and the fields it sets. The server built by
 * ExpressHttpAdapter creates them with those prototypes, which makes the assignment a no-op.
 */
function adopt(express: ExpressPrototypes, req: IncomingMessage, res: ServerResponse): Request {
  Object.setPrototypeOf(req, express.request);
  Object.setPrototypeOf(res, express.response);
  const request = req as Request;
  const response = res as Response;
  request.res = response;
  response.req = request;
  response.locals ??= Object.create(null) as Response['locals'];
  request.originalUrl = req.url ?? '';
  request.baseUrl = '';
  request.params = {};
  return request;
}

/**
 * Express's order of middleware: each calls `next` to go on, or `next(error)` to stop with an error; a
 * middleware that throws, or returns a promise that rejects, stops with that error.
 */
function runChain(
  handlers: RequestHandler[],
  req: Request,
  res: Response,
  done: (error?: unknown) => void,
): void {
  let index = 0;
  const next = (error?: unknown): void => {
    if (error !== undefined && error !== null) return done(error);
    const handler = handlers[index++];
    if (handler === undefined) return done();
    try {
      const returned: unknown = handler(req, res, next);
      if (returned instanceof Promise) returned.catch(done);
    } catch (thrown) {
      done(thrown);
    }
  };
  next();
}

function noNext(): void {}
