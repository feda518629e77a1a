import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import type { ProtocolName } from '../inbound/inbound-protocol';
import { anthropicChatExchange, openAiChatExchange } from './chat-exchanges';
import { anthropicMessagesExchange, openAiMessagesExchange } from './messages-exchanges';
import { anthropicResponsesExchange, openAiResponsesExchange } from './responses-exchanges';
import type { UpstreamExchange } from './upstream-exchange';

/** For each inbound protocol, the exchange with the configured upstream provider, chosen once. */
@Injectable()
export class UpstreamExchanges {
  private readonly byProtocol: Record<ProtocolName, UpstreamExchange>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const anthropic = config.upstream.provider === 'anthropic';
    this.byProtocol = {
      chat: anthropic ? anthropicChatExchange : openAiChatExchange,
      responses: anthropic ? anthropicResponsesExchange : openAiResponsesExchange,
      messages: anthropic ? anthropicMessagesExchange : openAiMessagesExchange,
    };
  }

  for(protocol: ProtocolName): UpstreamExchange {
    return this.byProtocol[protocol];
  }
}
