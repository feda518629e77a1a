import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { isPlainObject } from '../common/json-values';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { toOpenAIErrorBody, toOpenAIModelList } from '../upstream/anthropic-translation';
import type { AnthropicModelList } from '../upstream/anthropic-types';
import { relayHeaders } from '../upstream/relay-headers';
import { ClientConnection } from './client-connection';
import { invalidUpstreamAnswer } from './exchanges/upstream-exchange';
import { parseJson } from './exchanges/verbatim-exchange';
import { UpstreamCaller } from './upstream-caller';

/**
 * The upstream calls that involve no memory: the model list (translated from Anthropic's) and
 * embeddings (OpenAI-compatible upstreams only), relayed with the same key rules as chat.
 */
@Injectable()
export class PassThrough {
  private readonly anthropic: boolean;

  constructor(
    private readonly upstream: UpstreamCaller,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.anthropic = config.upstream.provider === 'anthropic';
  }

  async models(req: Request, res: Response): Promise<void> {
    const client = new ClientConnection(req, res);
    const upstream = await this.upstream.send({ method: 'GET', path: '/models' }, req, client.cancellation);
    const payload = upstream && (await this.upstream.read(upstream, req, client.cancellation));
    if (!upstream || payload === null) return;
    if (!this.anthropic) return send(res, upstream.status, relayHeaders(upstream.headers), payload);
    const parsed = parseJson(payload);
    if (upstream.status < 300 && !isAnthropicModelList(parsed)) throw invalidUpstreamAnswer('a model list');
    const body =
      upstream.status < 300
        ? toOpenAIModelList(parsed as AnthropicModelList)
        : toOpenAIErrorBody(parsed, upstream.status);
    send(
      res,
      upstream.status,
      { ...relayHeaders(upstream.headers), 'content-type': 'application/json' },
      JSON.stringify(body),
    );
  }

  async embeddings(req: Request, res: Response, body: unknown): Promise<void> {
    if (this.anthropic) {
      throw new ApiError(
        HttpStatus.BAD_REQUEST,
        'unsupported_for_provider',
        'The configured upstream (Anthropic) has no embeddings API.',
      );
    }
    const client = new ClientConnection(req, res);
    const upstream = await this.upstream.send(
      { method: 'POST', path: '/embeddings', body: body as object },
      req,
      client.cancellation,
    );
    const payload = upstream && (await this.upstream.read(upstream, req, client.cancellation));
    if (!upstream || payload === null) return;
    send(res, upstream.status, relayHeaders(upstream.headers), payload);
  }
}

function send(
  res: Response,
  status: number,
  headers: Record<string, string | string[]>,
  body: string | Buffer,
) {
  res.status(status);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(body);
}

function isAnthropicModelList(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    Array.isArray(value.data) &&
    value.data.every((model) => isPlainObject(model) && typeof model.id === 'string')
  );
}
