import { HttpStatus } from '@nestjs/common';
import type { Response } from 'express';
import { once } from 'node:events';
import { ApiError } from '../common/api-error';
import { HeaderMap } from '../upstream/relay-headers';
import { UpstreamBody, UpstreamClient, UpstreamRequest, UpstreamResponse } from '../upstream/upstream-client';
import { classifyUpstreamFailure, UpstreamTimeoutError } from '../upstream/upstream-errors';

/** Largest non-stream upstream answer the proxy will hold in memory. */
export const MAX_UPSTREAM_BODY_BYTES = 64 * 1024 * 1024;

/** What a relay reports back: the assistant's reply when the exchange completed, else null. */
export interface RelayOutcome {
  reply: string | null;
}

export const NO_REPLY: RelayOutcome = { reply: null };

/** Maps a failure before the first byte to our envelope: 504 upstream_timeout or 502 upstream_unavailable. */
export function upstreamFailure(error: unknown): ApiError {
  const failure = classifyUpstreamFailure(error);
  if (failure instanceof UpstreamTimeoutError) {
    return new ApiError(
      HttpStatus.GATEWAY_TIMEOUT,
      'upstream_timeout',
      'The upstream provider did not answer in time.',
    );
  }
  return new ApiError(
    HttpStatus.BAD_GATEWAY,
    'upstream_unavailable',
    'The upstream provider could not be reached.',
  );
}

/** The SSE event that ends a stream the upstream broke off. */
export function sseErrorEvent(error: unknown): string {
  const apiError = upstreamFailure(error);
  return `data: ${JSON.stringify(apiError.toEnvelope())}\n\n`;
}

/**
 * Sends to the upstream. A failure becomes 502/504 in the envelope, unless the client has already gone
 * (the request was aborted for it): then null, since nobody is left to answer.
 */
export async function sendUpstream(
  upstream: UpstreamClient,
  request: UpstreamRequest & { signal: AbortSignal },
): Promise<UpstreamResponse | null> {
  try {
    return await upstream.send(request);
  } catch (error) {
    if (request.signal.aborted) return null;
    throw upstreamFailure(error);
  }
}

/** Reads a whole upstream answer, with the same failure rules as `sendUpstream`. */
export async function readUpstream(response: UpstreamResponse, signal: AbortSignal): Promise<Buffer | null> {
  try {
    return await readBody(response.body);
  } catch (error) {
    if (signal.aborted) return null;
    throw upstreamFailure(error);
  }
}

export function writeHead(res: Response, status: number, headers: HeaderMap): void {
  res.status(status);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

export async function readBody(body: UpstreamBody): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_UPSTREAM_BODY_BYTES) {
      body.destroy();
      throw new ApiError(HttpStatus.BAD_GATEWAY, 'upstream_unavailable', 'The upstream answer is too large.');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Writes one chunk, waiting while the client's buffer is full; false when the client has gone. */
export async function writeChunk(res: Response, chunk: Buffer | string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  if (!res.write(chunk)) {
    await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  return !res.destroyed;
}

export function isEventStream(headers: HeaderMap): boolean {
  const contentType = headers['content-type'];
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/event-stream');
}

export function parseJson(buffer: Buffer): unknown {
  try {
    return JSON.parse(buffer.toString('utf8'));
  } catch {
    return undefined;
  }
}
