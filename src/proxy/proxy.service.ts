import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { BackgroundWork } from '../common/background-work';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { applyRequestSchemas, parseRequestTraitSchemas } from '../traits/request-trait-schemas';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import { AnthropicRelay } from './anthropic-relay';
import { parseChatRequest } from './chat-request';
import { injectContext } from './context-text';
import { ContextService } from './context.service';
import { ConversationRecorder, latestUserMessages } from './conversation-recorder';
import { OpenAiRelay } from './openai-relay';
import { resolveUserId } from './user-id';

/**
 * The chat path: resolve the profile, inject its context, relay to the upstream, and after a complete
 * answer record the turn in the background (which starts extraction).
 */
@Injectable()
export class ProxyService {
  constructor(
    private readonly schemas: TraitSchemaRegistry,
    private readonly context: ContextService,
    private readonly recorder: ConversationRecorder,
    private readonly openAi: OpenAiRelay,
    private readonly anthropic: AnthropicRelay,
    private readonly background: BackgroundWork,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async chat(req: Request, res: Response, body: unknown): Promise<void> {
    const request = parseChatRequest(body);
    const userId = resolveUserId(req.headers['x-service-id'], request);
    const traitOverrides = parseRequestTraitSchemas(req.headers['x-service-traits'], request.service?.traits);
    const schemas = applyRequestSchemas(this.schemas.all(), traitOverrides);
    const options = request.service ?? {};
    const question = latestUserMessages(request.messages).join('\n');
    const { profileId, context } = await this.context.forChat(
      userId,
      schemas,
      question,
      options.skipInjection === true,
    );

    const { service: _service, ...forwarded } = request;
    const upstreamBody = { ...forwarded, messages: injectContext(request.messages, context.text) };
    res.setHeader(
      'x-service-context',
      `traits=${context.traitKeys.length}; memories=${context.memoryIds.length}`,
    );
    if (options.debug) {
      res.setHeader(
        'x-service-context-ids',
        `traits=${context.traitKeys.join(',')}; memories=${context.memoryIds.join(',')}`,
      );
    }

    const relay = this.config.upstream.provider === 'anthropic' ? this.anthropic : this.openAi;
    const outcome = await relay.chat(res, upstreamBody, {
      apiKey: upstreamKey(req),
      signal: clientGone(res),
    });
    if (outcome.reply === null) return;

    const requestId = randomUUID();
    this.background.run('record turn', () =>
      this.recorder.record({
        profileId,
        messages: request.messages,
        reply: outcome.reply ?? '',
        model: request.model,
        requestId,
        skipExtraction: options.skipExtraction === true,
        traitOverrides,
        injectedMemoryIds: context.memoryIds,
      }),
    );
  }

  async models(req: Request, res: Response): Promise<void> {
    const relay = this.config.upstream.provider === 'anthropic' ? this.anthropic : this.openAi;
    await relay.models(res, { apiKey: upstreamKey(req), signal: clientGone(res) });
  }
}

/** X-Upstream-Key replaces the configured key for this request; our own Authorization is never sent on. */
function upstreamKey(req: Request): string | undefined {
  const header = req.headers['x-upstream-key'];
  const key = Array.isArray(header) ? header[0] : header;
  return key && key.trim() !== '' ? key.trim() : undefined;
}

/** Aborts the upstream request when the client disconnects before the answer is complete. */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
