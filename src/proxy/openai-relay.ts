import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { isPlainObject } from '../common/json-values';
import { relayHeaders } from '../upstream/relay-headers';
import { ChatCompletionStreamAccumulator } from '../upstream/sse';
import { UpstreamClient, UpstreamResponse } from '../upstream/upstream-client';
import {
  isEventStream,
  NO_REPLY,
  readUpstream,
  RelayOutcome,
  sendUpstream,
  sseErrorEvent,
  writeChunk,
  writeHead,
} from './relay-io';

/**
 * Relays to an OpenAI-compatible upstream: the answer goes back verbatim (status, the headers that
 * matter, body bytes), streams chunk by chunk as they arrive. The assistant text is read on the side.
 */
@Injectable()
export class OpenAiRelay {
  constructor(private readonly upstream: UpstreamClient) {}

  async chat(
    res: Response,
    body: object,
    options: { apiKey?: string; signal: AbortSignal },
  ): Promise<RelayOutcome> {
    const upstream = await sendUpstream(this.upstream, {
      method: 'POST',
      path: '/chat/completions',
      body: JSON.stringify(body),
      apiKey: options.apiKey,
      signal: options.signal,
    });
    if (!upstream) return NO_REPLY;
    writeHead(res, upstream.status, relayHeaders(upstream.headers));
    if (upstream.status < 300 && isEventStream(upstream.headers)) return this.relayStream(res, upstream);

    const payload = await readUpstream(upstream, options.signal);
    if (payload === null) return NO_REPLY;
    res.end(payload);
    return upstream.status < 300 ? { reply: completionText(payload) } : NO_REPLY;
  }

  async models(res: Response, options: { apiKey?: string; signal: AbortSignal }): Promise<void> {
    const upstream = await sendUpstream(this.upstream, {
      method: 'GET',
      path: '/models',
      apiKey: options.apiKey,
      signal: options.signal,
    });
    if (!upstream) return;
    writeHead(res, upstream.status, relayHeaders(upstream.headers));
    const payload = await readUpstream(upstream, options.signal);
    if (payload !== null) res.end(payload);
  }

  private async relayStream(res: Response, upstream: UpstreamResponse): Promise<RelayOutcome> {
    res.flushHeaders();
    const accumulator = new ChatCompletionStreamAccumulator();
    try {
      for await (const chunk of upstream.body) {
        accumulator.push(chunk);
        if (!(await writeChunk(res, chunk))) {
          upstream.body.destroy();
          return NO_REPLY;
        }
      }
    } catch (error) {
      if (!res.destroyed) res.end(sseErrorEvent(error));
      return NO_REPLY;
    }
    accumulator.end();
    res.end();
    const summary = accumulator.summary();
    const finished = summary.sawDone || summary.finishReasonByChoice.size > 0;
    return finished && summary.error === undefined ? { reply: accumulator.text(0) } : NO_REPLY;
  }
}

/** The first choice's text of a `chat.completion` body, or '' when it has none (e.g. only tool calls). */
function completionText(payload: Buffer): string {
  try {
    const parsed: unknown = JSON.parse(payload.toString('utf8'));
    if (!isPlainObject(parsed) || !Array.isArray(parsed.choices)) return '';
    const first: unknown = parsed.choices[0];
    if (!isPlainObject(first) || !isPlainObject(first.message)) return '';
    return typeof first.message.content === 'string' ? first.message.content : '';
  } catch {
    return '';
  }
}
