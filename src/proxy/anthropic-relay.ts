import { HttpStatus, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../common/api-error';
import {
  AnthropicStreamTranslator,
  InvalidChatRequestError,
  toAnthropicRequest,
  toOpenAIChatCompletion,
  toOpenAIErrorBody,
  toOpenAIModelList,
} from '../upstream/anthropic-translation';
import type { AnthropicMessage, AnthropicModelList } from '../upstream/anthropic-types';
import type { OpenAIChatRequest } from '../upstream/openai-types';
import { relayHeaders } from '../upstream/relay-headers';
import { UpstreamClient, UpstreamResponse } from '../upstream/upstream-client';
import {
  NO_REPLY,
  parseJson,
  readUpstream,
  RelayOutcome,
  sendUpstream,
  sseErrorEvent,
  writeChunk,
  writeHead,
} from './relay-io';

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * Relays OpenAI chat requests to the Anthropic Messages API: the request is translated, and the answer
 * (or each stream event) translated back, so the client sees an OpenAI-compatible service.
 */
@Injectable()
export class AnthropicRelay {
  constructor(private readonly upstream: UpstreamClient) {}

  async chat(
    res: Response,
    body: object,
    options: { apiKey?: string; signal: AbortSignal },
  ): Promise<RelayOutcome> {
    const request = body as OpenAIChatRequest & {
      model: string;
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
    };
    let translated: object;
    try {
      translated = toAnthropicRequest(request);
    } catch (error) {
      if (error instanceof InvalidChatRequestError) {
        throw new ApiError(HttpStatus.BAD_REQUEST, 'unsupported_for_provider', error.message, error.param);
      }
      throw error;
    }
    const upstream = await sendUpstream(this.upstream, {
      method: 'POST',
      path: '/messages',
      body: JSON.stringify(translated),
      apiKey: options.apiKey,
      signal: options.signal,
    });
    if (!upstream) return NO_REPLY;

    if (upstream.status < 300 && request.stream === true) {
      return this.relayStream(res, upstream, request.model, request.stream_options?.include_usage === true);
    }
    const payload = await readUpstream(upstream, options.signal);
    if (payload === null) return NO_REPLY;
    const parsed = parseJson(payload);
    writeHead(res, upstream.status, { ...relayHeaders(upstream.headers), ...JSON_HEADERS });
    if (upstream.status >= 300) {
      res.end(JSON.stringify(toOpenAIErrorBody(parsed, upstream.status)));
      return NO_REPLY;
    }
    const completion = toOpenAIChatCompletion(parsed as AnthropicMessage);
    res.end(JSON.stringify(completion));
    const content = completion.choices[0]?.message.content;
    return { reply: typeof content === 'string' ? content : '' };
  }

  async models(res: Response, options: { apiKey?: string; signal: AbortSignal }): Promise<void> {
    const upstream = await sendUpstream(this.upstream, {
      method: 'GET',
      path: '/models',
      apiKey: options.apiKey,
      signal: options.signal,
    });
    if (!upstream) return;
    const payload = await readUpstream(upstream, options.signal);
    if (payload === null) return;
    const parsed = parseJson(payload);
    writeHead(res, upstream.status, { ...relayHeaders(upstream.headers), ...JSON_HEADERS });
    res.end(
      JSON.stringify(
        upstream.status < 300
          ? toOpenAIModelList(parsed as AnthropicModelList)
          : toOpenAIErrorBody(parsed, upstream.status),
      ),
    );
  }

  private async relayStream(
    res: Response,
    upstream: UpstreamResponse,
    model: string,
    includeUsage: boolean,
  ): Promise<RelayOutcome> {
    writeHead(res, upstream.status, {
      ...relayHeaders(upstream.headers),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    res.flushHeaders();
    const translator = new AnthropicStreamTranslator({ model, includeUsage });
    try {
      for await (const chunk of upstream.body) {
        const text = translator.push(chunk);
        if (text && !(await writeChunk(res, text))) {
          upstream.body.destroy();
          return NO_REPLY;
        }
      }
    } catch (error) {
      if (!res.destroyed) res.end(sseErrorEvent(error));
      return NO_REPLY;
    }
    const rest = translator.end();
    res.end(rest);
    return translator.finished ? { reply: translator.text } : NO_REPLY;
  }
}
