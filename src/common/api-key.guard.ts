import { CanActivate, ExecutionContext, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ApiError } from './api-error';
import { IS_PUBLIC } from './public.decorator';

/**
 * The shared API key (SERVICE_API_KEY). Closed by default: every route needs the key unless it is
 * marked @Public(). Keys are compared as HMACs of equal length, so neither content nor length leaks
 * through timing.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly hmacKey = randomBytes(32);
  private readonly expectedDigest: Buffer | null;

  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.expectedDigest = config.serviceApiKey === null ? null : this.digest(config.serviceApiKey);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expectedDigest === null) return true;
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;

    const token = presentedKey(context.switchToHttp().getRequest<Request>());
    if (token === undefined) {
      throw new ApiError(
        HttpStatus.UNAUTHORIZED,
        'missing_api_key',
        'This service requires an API key: send "Authorization: Bearer <key>" (or "x-api-key: <key>").',
      );
    }
    if (!timingSafeEqual(this.digest(token), this.expectedDigest)) {
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'invalid_api_key', 'The API key is not valid.');
    }
    return true;
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
