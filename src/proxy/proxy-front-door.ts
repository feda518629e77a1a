import { CanActivate, ForbiddenException, Injectable, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModuleRef } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AllExceptionsFilter } from '../common/all-exceptions.filter';
import { GLOBAL_GUARDS } from '../common/common.module';
import { runWithRequestLogger } from '../logging/http-logger';
import { ProxyController } from './proxy.controller';

/** What Express gives every request and response it handles (its `app.request` and `app.response`). */
interface ExpressPrototypes {
  request: object;
  response: object;
}

/** A proxy route the front door answers: its path and the controller method that serves it. */
interface DirectRoute {
  path: string;
  method: (body: unknown, req: Request, res: Response) => Promise<void>;
}

/**
 * The proxy's POST routes, served from the HTTP server ahead of Express's router and Nest's route
 * handling, which together cost a proxied chat about a quarter of its CPU. A request runs the same
 * steps in the same order: the edge middleware that configureApp gives Express (request id and log
 * line, metrics, security headers, CORS, body parsing), the request's logger bound as nestjs-pino binds
 * it, the global guards (rate limit, API key) with the controller's own metadata, the controller's
 * method, and any error through the global exception filter.
 *
 * Only exact matches are taken: `POST` to a route's path as the controller declares it, with any query.
 * Everything else (another case, a trailing slash, a method that is not POST, a route whose parameters
 * are not the raw body, request and response) goes to Express, where the same controller serves it.
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

  /** The paths answered here, for the docs and the tests. */
  get paths(): string[] {
    return [...this.routes.keys()];
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
      const request = adopt(express, req, res, route.path);
      const response = request.res!;
      runChain(edge, request, response, (error) => {
        if (error !== undefined) return this.fail(error, route, request, response);
        runWithRequestLogger(request, () => {
          this.handle(controller, guards, route, request, response).catch((failure: unknown) =>
            this.fail(failure, route, request, response),
          );
        });
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
    await route.method.call(controller, req.body, req, res);
  }

  private fail(error: unknown, route: DirectRoute, req: Request, res: Response): void {
    this.filter.catch(error, new ExecutionContextHost([req, res, noNext], ProxyController, route.method));
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
    if (!takesRawBodyRequestResponse(type, name)) continue;
    const path = joinPath(prefix, (Reflect.getMetadata(PATH_METADATA, method) as string | undefined) ?? '');
    routes.push({ path, method: method as DirectRoute['method'] });
  }
  return routes;
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
 * The request and response as Express's router would hand them to the route: Express's prototypes
 * (`req.ip` with TRUST_PROXY, `res.status`, `res.json`), the fields its router sets, and the route's
 * pattern, which the request line and the metrics label read.
 */
function adopt(express: ExpressPrototypes, req: IncomingMessage, res: ServerResponse, path: string): Request {
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
  (request as { route?: unknown }).route = { path };
  return request;
}

/** Express's order of middleware: each calls `next` to go on, or `next(error)` to stop with an error. */
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
      void handler(req, res, next);
    } catch (thrown) {
      done(thrown);
    }
  };
  next();
}

function noNext(): void {}
