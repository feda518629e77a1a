import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { accessOf } from '../common/request-access';
import { ServingLoad } from '../common/serving-load';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MemoryTouches } from '../memories/memory-touches';
import { storedMessageText, TurnRecorder } from '../messages/turn-recorder';
import { ExtractionService } from '../extraction/extraction.service';
import { MetricsService } from '../metrics/metrics.service';
import { applyRequestSchemas } from '../traits/request-trait-schemas';
import type { TraitSchema } from '../traits/trait-schema';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import type { UpstreamResponse } from '../upstream/upstream-client';
import { ClientConnection } from './client-connection';
import type { BuiltContext } from '../context/context-text';
import { ContextService } from '../context/context.service';
import { EventStreamWriter } from './event-stream-writer';
import { relayChunks } from './relay-chunks';
import type { UpstreamExchange } from './exchanges/upstream-exchange';
import { UpstreamExchanges } from './exchanges/upstream-exchanges';
import type { InboundProtocol, InboundTurn } from './inbound/inbound-protocol';
import { UpstreamCaller } from './upstream-caller';

/**
 * The one path of every proxied turn, whatever the client's protocol and the upstream's:
 * read the request (the protocol's adapter), find the user's profile and the context for the question,
 * inject it, relay to the upstream through the exchange chosen for this protocol (verbatim or
 * translated, streams piece by piece), and when the answer completed, record the turn (which starts
 * learning from it). A cut or failed answer is never recorded.
 */
@Injectable()
export class RelayPipeline {
  constructor(
    private readonly schemas: TraitSchemaRegistry,
    private readonly context: ContextService,
    private readonly exchanges: UpstreamExchanges,
    private readonly upstream: UpstreamCaller,
    private readonly recorder: TurnRecorder,
    private readonly extraction: ExtractionService,
    private readonly touches: MemoryTouches,
    private readonly load: ServingLoad,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async relay(protocol: InboundProtocol, req: Request, res: Response, body: unknown): Promise<void> {
    const answered = this.load.begin();
    try {
      await this.relayTurn(protocol, req, res, body);
    } finally {
      answered();
    }
  }

  private async relayTurn(
    protocol: InboundProtocol,
    req: Request,
    res: Response,
    body: unknown,
  ): Promise<void> {
    const client = new ClientConnection(req, res);
    const turn = protocol.parse(body, req.headers);
    const schemas = applyRequestSchemas(this.schemas.all(), turn.traitOverrides);
    let found: { profileId: string; context: BuiltContext } | null;
    try {
      found = await this.context.forChat(
        accessOf(req).application.id,
        turn.userId,
        schemas,
        turn.question,
        turn.options.skipInjection,
        () => client.signal,
      );
    } catch (error) {
      if (!client.gone) throw error;
      found = null;
    }
    if (client.gone || found === null) return;
    const { profileId, context } = found;

    const exchange = this.exchanges.for(protocol.name);
    const upstreamBody = exchange.requestBody(protocol.inject(turn.body, context.text));
    announceContext(res, context, turn.options.debug);
    this.metrics.observeInjectedContext(context.traitKeys.length, context.memoryIds.length);
    const upstream = await this.upstream.send(
      { method: 'POST', path: exchange.path, body: upstreamBody, headers: forwardedHeaders(req, exchange) },
      req,
      client.cancellation,
    );
    if (!upstream) return;

    const finish = async (reply: string | null, end: () => void) => {
      if (reply === null) return end();
      // The answer ends once its turn is stored: a client that received it whole can count on it.
      try {
        await this.record(profileId, turn, schemas, reply, requestId(req), context);
      } finally {
        end();
      }
    };
    // the answer is read for the client's own request: a translation echoes its settings, never the profile
    if (exchange.streams(upstream.status, upstream.headers, turn.body)) {
      await this.relayStream(client, exchange, upstream, turn.body, finish);
    } else {
      const payload = await this.upstream.read(upstream, req, client.cancellation);
      if (payload === null) return;
      const answer = exchange.answer(upstream.status, upstream.headers, payload, turn.body);
      res.status(answer.status);
      for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      await finish(answer.reply, () => res.end(answer.body));
    }
  }

  private async relayStream(
    client: ClientConnection,
    exchange: UpstreamExchange,
    upstream: UpstreamResponse,
    clientBody: Record<string, unknown>,
    finish: (reply: string | null, end: () => void) => Promise<void>,
  ): Promise<void> {
    const writer = new EventStreamWriter(client, upstream.status, exchange.streamHeaders(upstream.headers), {
      idleTimeoutMs: this.config.upstream.streamIdleTimeoutMs,
      keepAliveMs: this.config.upstream.streamKeepAliveMs,
    });
    const translation = exchange.stream(clientBody);
    // From the event that completes the answer on, what is to be written waits for the turn's commit.
    const held: Array<string | Buffer> = [];
    const relay = (chunk: Buffer): boolean | Promise<boolean> => {
      const piece = translation.push(chunk);
      if (held.length === 0 && translation.completedReply() === null) return writer.write(piece);
      held.push(piece);
      return !client.gone;
    };
    try {
      if (!(await relayChunks(upstream.body, relay))) {
        upstream.body.destroy();
        writer.stop();
        return;
      }
    } catch (error) {
      writer.end(client.gone ? undefined : translation.fail(this.upstream.failure(error, client.req)));
      return;
    }
    held.push(translation.end());
    const last = Buffer.concat(held.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
    await finish(translation.completedReply(), () => writer.end(last));
  }

  private async record(
    profileId: string,
    turn: InboundTurn,
    schemas: readonly TraitSchema[],
    reply: string,
    requestId: string,
    context: BuiltContext,
  ): Promise<void> {
    this.touches.touch(context.memoryIds);
    const learn = !turn.options.skipExtraction;
    const userMessages = await Promise.all(
      turn.userTexts.map(async (text) => ({
        text,
        toLearn: learn && (await this.extraction.mayLearnFrom(storedMessageText(text), schemas)),
      })),
    );
    return this.recorder.store({
      profileId,
      userMessages,
      reply,
      model: turn.model,
      requestId,
      traitOverrides: turn.traitOverrides,
      injected: { traits: context.traitKeys, memories: context.memoryIds },
    });
  }
}

/** The context's size for clients (`x-service-context`), and its ids when debugging. */
function announceContext(res: Response, context: BuiltContext, debug: boolean): void {
  res.setHeader(
    'x-service-context',
    `traits=${context.traitKeys.length}; memories=${context.memoryIds.length}`,
  );
  if (debug) {
    res.setHeader(
      'x-service-context-ids',
      `traits=${context.traitKeys.join(',')}; memories=${context.memoryIds.join(',')}`,
    );
  }
}

/** The client's headers that the upstream should see, when the exchange names any. */
function forwardedHeaders(req: Request, exchange: UpstreamExchange): Record<string, string> | undefined {
  if (!exchange.forwardedHeaders) return undefined;
  const headers: Record<string, string> = {};
  for (const name of exchange.forwardedHeaders) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** The id of the request's log line (the request-log middleware takes it from X-Request-Id or makes one). */
function requestId(req: Request): string {
  const id = (req as Request & { id?: unknown }).id;
  return typeof id === 'string' ? id : '';
}
