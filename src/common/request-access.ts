import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/**
 * What a key may do: `proxy` (the /v1 routes and MCP), `read` (the /api reads, context, export), `write`
 * (the /api writes and ingest), `admin` (keys, applications, audit, erasure).
 */
export const SCOPES = ['proxy', 'read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface ApplicationRef {
  id: string;
  name: string;
}

/** Who makes a change, as the audit trail records it: a key's id (null for the root key), never its secret. */
export interface Actor {
  keyId: string | null;
  /** Null only for a request that failed authentication. */
  applicationId: string | null;
  requestId: string | null;
}

/**
 * What the request's key may do and where: set on the request by the access guard before any handler
 * runs. The root key (SERVICE_API_KEY, or no key configured) has every scope and acts in the
 * application it names; an application key acts in its own.
 */
export interface RequestAccess {
  application: ApplicationRef;
  keyId: string | null;
  keyName: string;
  prefix: string | null;
  root: boolean;
  scopes: readonly Scope[];
}

export const REQUEST_ACCESS = Symbol('request access');

type WithAccess = IncomingMessage & { [REQUEST_ACCESS]?: RequestAccess; id?: unknown };

export function setRequestAccess(req: IncomingMessage, access: RequestAccess): void {
  (req as WithAccess)[REQUEST_ACCESS] = access;
}

/** The request's access; the guard sets it on every route it lets through, so a handler always finds it. */
export function accessOf(req: IncomingMessage): RequestAccess {
  const access = (req as WithAccess)[REQUEST_ACCESS];
  if (access === undefined) throw new Error('the request has no access: the access guard did not run');
  return access;
}

export function actorOf(req: IncomingMessage): Actor {
  const access = accessOf(req);
  const id = (req as WithAccess).id;
  return {
    keyId: access.keyId,
    applicationId: access.application.id,
    requestId: typeof id === 'string' ? id : null,
  };
}

/** The caller of a route: what its key may do, and who it is for the audit trail. */
export interface RequestCaller {
  access: RequestAccess;
  actor: Actor;
}

/** A handler's parameter: the request's RequestCaller. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): RequestCaller => {
  const req = context.switchToHttp().getRequest<IncomingMessage>();
  return { access: accessOf(req), actor: actorOf(req) };
});
