import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { finished, Readable } from 'node:stream';
import { ApiError } from '../common/api-error';
import { requestLogger } from '../common/request-logger';
import { jsonBytes } from '../common/text-slices';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import {
  classifyUpstreamFailure,
  UpstreamClient,
  UpstreamError,
  UpstreamResponse,
  UpstreamCancellation,
  UpstreamTimeoutError,
} from '../upstream/upstream-client';
import { upstreamFailureCause } from '../upstream/upstream-errors';

/** Largest non-stream upstream answer the proxy will hold in memory. */
export const MAX_UPSTREAM_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Calls the configured upstream for the proxy and turns its failures into answers that say what went
 * wrong: 502 `upstream_unavailable` or 504 `upstream_timeout` naming the upstream's host and the cause
 * (DNS, refused, TLS, ...). The first failure (and the first after a success) is logged at warn with
 * the same words, on the request that met it. When the client has gone, a failure is nobody's answer:
 * the calls return null.
 */
@Injectable()
export class UpstreamCaller {
  private readonly host: string;
  private lastFailure: string | null = null;

  constructor(
    private readonly upstream: UpstreamClient,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.host = new URL(config.upstream.baseUrl).host;
  }

  async send(
    request: { method: 'GET' | 'POST'; path: string; body?: object; headers?: Record<string, string> },
    req: Request,
    signal: AbortSignal | UpstreamCancellation,
  ): Promise<UpstreamResponse | null> {
    try {
      const response = await this.upstream.send({
        method: request.method,
        path: request.path,
        // bytes encoded in slices: undici would encode a long string in one task
        body: request.body === undefined ? undefined : await jsonBytes(request.body),
        headers: request.headers,
        apiKey: upstreamKey(req),
        signal,
      });
      this.lastFailure = null;
      return response;
    } catch (error) {
      if (signal.aborted) return null;
      throw this.failure(error, req);
    }
  }

  /** Reads a whole answer, within MAX_UPSTREAM_BODY_BYTES. */
  async read(
    response: UpstreamResponse,
    req: Request,
    signal: AbortSignal | UpstreamCancellation,
  ): Promise<Buffer | null> {
    try {
      return await readWhole(response.body, MAX_UPSTREAM_BODY_BYTES);
    } catch (error) {
      if (signal.aborted) return null;
      throw this.failure(error, req);
    }
  }

  /** The envelope error of `req`'s failure talking to the upstream (an ApiError passes through). */
  failure(error: unknown, req: Request): ApiError {
    if (error instanceof ApiError) return error;
    const failure = classifyUpstreamFailure(error);
    if (!failure) throw error;
    const message = this.describe(failure);
    if (this.lastFailure !== message) {
      this.lastFailure = message;
      requestLogger(req, 'Upstream').warn(message);
    }
    return failure instanceof UpstreamTimeoutError
      ? new ApiError(HttpStatus.GATEWAY_TIMEOUT, 'upstream_timeout', message)
      : new ApiError(HttpStatus.BAD_GATEWAY, 'upstream_unavailable', message);
  }

  private describe(failure: UpstreamError): string {
    const what = failure instanceof UpstreamTimeoutError ? 'did not answer in time' : 'could not be reached';
    return `The upstream provider at ${this.host} ${what}: ${upstreamFailureCause(failure)}.`;
  }
}

/** X-Upstream-Key replaces the configured key for this request; our own key is never sent on. */
function upstreamKey(req: Request): string | undefined {
  const header = req.headers['x-upstream-key'];
  const key = Array.isArray(header) ? header[0] : header;
  return key && key.trim() !== '' ? key.trim() : undefined;
}

/**
 * A stream's bytes once it has ended, refused (and the stream destroyed) past `limit` bytes; an
 * error, or an end before the stream finished, rejects. One promise for the whole body, where
 * `for await` over the stream made several per chunk, each paying the request context's hook.
 */
export function readWhole(body: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.destroy(
          new ApiError(
            HttpStatus.BAD_GATEWAY,
            'upstream_invalid_response',
            `The upstream answer is larger than ${limit} bytes.`,
          ),
        );
        return;
      }
      chunks.push(chunk);
    });
    finished(body, (error) => (error ? reject(error) : resolve(Buffer.concat(chunks))));
  });
}
