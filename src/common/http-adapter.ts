import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';

/**
 * Nest's Express adapter, with an HTTP server that creates every request and response as Express's
 * own from the start. Express otherwise gives each request and response its prototype
 * (`Object.setPrototypeOf`) when it starts handling them: objects that change prototype after they
 * were built make V8's inline caches in Node's HTTP code, Express and everything after them miss, and
 * that cost a proxied chat about a quarter of its CPU (bench/tools/ab-chat.ts). Express's
 * own assignment is then a no-op, since the prototype is already the one it sets.
 *
 * HTTPS and `forceCloseConnections`, which the service does not use, keep Nest's own server.
 */
export class ExpressHttpAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<Express>();
    this.httpServer = createServer(expressMessageClasses(app), app);
  }
}

/**
 * Classes of the request and response whose prototypes are Express's (`app.request`, `app.response`,
 * with `req.ip`, `res.status`, `res.json` and the rest), and which become them, so that Express finds
 * its prototypes already in place. Subclasses built with `class ... extends`, as Node expects of the
 * server's `IncomingMessage` and `ServerResponse` options: V8 builds their instances as fast as Node's.
 */
export function expressMessageClasses(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
  // Express's prototypes already lead to Node's: the classes' own prototypes sit in front of them
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  app.request = ExpressRequest.prototype as Express['request'];
  app.response = ExpressResponse.prototype as unknown as Express['response'];
  return { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse };
}
