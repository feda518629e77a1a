import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { accessOf, Actor, actorOf } from '../common/request-access';

/**
 * A profile as a request names it: the id in its path (internal or external), the application the
 * request acts in, and who asks (for the audit trail). ProfilesService.resolve finds a profile only
 * within that application, so another application's profile is one that does not exist (404) on every
 * route that names a profile.
 */
export interface ProfilePath {
  applicationId: string;
  pathId: string;
  actor: Actor;
}

/** A handler's parameter: the profile its `:id` path parameter names, in the request's application. */
export const ProfileInPath = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ProfilePath => {
    const req = context.switchToHttp().getRequest<Request>();
    const pathId = req.params.id;
    return {
      applicationId: accessOf(req).application.id,
      pathId: typeof pathId === 'string' ? pathId : '',
      actor: actorOf(req),
    };
  },
);

/** The same profile named by its internal id (a profile a service already resolved). */
export function byInternalId(path: ProfilePath, profileId: string): ProfilePath {
  return { ...path, pathId: profileId };
}
