import { CanActivate, ExecutionContext, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { BackgroundWork } from '../common/background-work';
import { IS_PUBLIC, REQUIRED_SCOPE } from '../common/public.decorator';
import { RequestAccess, Scope, SCOPES, setRequestAccess } from '../common/request-access';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { KeyRateLimits } from '../rate-limit/key-rate-limits';
import { AuditTrail } from './audit-trail';
import { keyPrefixOf, looksLikeApplicationKey } from './key-secrets';
import { KeyVerifier } from './key-verifier';

/** The header with which the root key names the application it acts in. */
export const APPLICATION_HEADER = 'x-service-application';
export const DEFAULT_APPLICATION = 'default';

/**
 * Who the request is and what it may do. Closed by default: every route needs a key unless it is
 * marked @Public(), and a route's @RequiresScope() names the scope the key must carry (a route with
 * neither is the root key's only). SERVICE_API_KEY is the root key: every scope, in the application
 * `X-Service-Application` names (`default` without it); with no SERVICE_API_KEY set, a request without
 * an application key is the root, as a single-key service always was. An application key
 * (`pms_<prefix>_<secret>`) acts in its own application with its own scopes. The request's access is
 * left on the request (accessOf) for the handlers. The root key is compared as HMACs of equal length,
 * an application key as SHA-256 hashes, so neither content nor length leaks through timing. Every
 * failed authentication is recorded in the audit trail (after the answer, never blocking it). An
 * application key's request then counts against its key's and its application's limits (KeyRateLimits).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly hmacKey = randomBytes(32);
  private readonly rootDigest: Buffer | null;

  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: KeyVerifier,
    private readonly audit: AuditTrail,
    private readonly background: BackgroundWork,
    private readonly rateLimits: KeyRateLimits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.rootDigest = config.serviceApiKey === null ? null : this.digest(config.serviceApiKey);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const access = await this.authenticate(req);
    setRequestAccess(req, access);
    const scope = this.reflector.getAllAndOverride<Scope | 'any' | 'root' | undefined>(
      REQUIRED_SCOPE,
      targets,
    );
    const allowed =
      scope === undefined || scope === 'root'
        ? access.root
        : scope === 'any' || access.scopes.includes(scope);
    if (!allowed) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        'insufficient_scope',
        scope === undefined || scope === 'root'
          ? 'Only the service key (SERVICE_API_KEY) may use this route.'
          : `This key lacks the "${scope}" scope that this route needs.`,
      );
    }
    await this.rateLimits.count(access, context.switchToHttp().getResponse<Response>());
    return true;
  }

  private async authenticate(req: Request): Promise<RequestAccess> {
    const token = presentedKey(req);
    if (
      token !== undefined &&
      this.rootDigest !== null &&
      timingSafeEqual(this.digest(token), this.rootDigest)
    ) {
      return this.rootAccess(req);
    }
    if (token !== undefined && looksLikeApplicationKey(token)) {
      const key = await this.verifier.verify(token);
      if (key === null) throw this.denied(req, 'invalid_api_key', keyPrefixOf(token));
      return {
        application: key.application,
        keyId: key.id,
        keyName: key.name,
        prefix: key.prefix,
        root: false,
        scopes: key.scopes,
      };
    }
    if (this.rootDigest === null) return this.rootAccess(req);
    throw this.denied(req, token === undefined ? 'missing_api_key' : 'invalid_api_key', null);
  }

  private async rootAccess(req: Request): Promise<RequestAccess> {
    const header = req.headers[APPLICATION_HEADER];
    const named = typeof header === 'string' && header.trim() !== '' ? header.trim() : DEFAULT_APPLICATION;
    const application = await this.verifier.application(named);
    if (application === null) {
      throw new ApiError(
        HttpStatus.NOT_FOUND,
        'application_not_found',
        `There is no application "${named.slice(0, 80)}" (X-Service-Application).`,
        'X-Service-Application',
      );
    }
    return {
      application: { id: application.id, name: application.name },
      keyId: null,
      keyName: 'SERVICE_API_KEY',
      prefix: null,
      root: true,
      scopes: SCOPES,
    };
  }

  private denied(req: Request, code: 'missing_api_key' | 'invalid_api_key', prefix: string | null): ApiError {
    const id = (req as unknown as { id?: unknown }).id;
    const requestId = typeof id === 'string' ? id : null;
    this.background.run('audit of a failed authentication', () => this.audit.recordDenied(requestId, prefix));
    return code === 'missing_api_key'
      ? new ApiError(
          HttpStatus.UNAUTHORIZED,
          'missing_api_key',
          'This service requires an API key: send "Authorization: Bearer <key>" (or "x-api-key: <key>").',
        )
      : new ApiError(HttpStatus.UNAUTHORIZED, 'invalid_api_key', 'The API key is not valid.');
  }

  private digest(value: string): Buffer {
    return createHmac('sha256', this.hmacKey).update(value, 'utf8').digest();
  }
}

/**
 * The key as OpenAI clients send it (`Authorization: Bearer`) or as Anthropic clients do (`x-api-key`).
 * Either way it is this service's key: it is never sent on to the upstream.
 */
function presentedKey(req: Request): string | undefined {
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string') return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  const apiKey = req.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.trim() !== '' ? apiKey.trim() : undefined;
}
