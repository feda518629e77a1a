import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CONVERSATION_RECORDED, ConversationRecordedEvent } from '../messages/conversation-events';
import { RequestTraitSchema } from '../traits/request-trait-schemas';
import { ChatMessage, messageText } from './chat-request';

export interface RecordedTurn {
  messageIds: string[];
}

/**
 * Stores one chat turn: the user's messages after the last assistant message (history the client
 * resends is not stored again) and the assistant's reply. `conversation.recorded` is emitted after the
 * commit, so a listener always finds the rows. With `skipExtraction` the turn is stored already marked
 * as extracted, so the extraction sweep leaves it alone.
 */
@Injectable()
export class ConversationRecorder {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventEmitter2,
  ) {}

  async record(turn: {
    profileId: string;
    messages: ChatMessage[];
    reply: string;
    model: string;
    requestId: string;
    skipExtraction: boolean;
    traitOverrides: RequestTraitSchema[];
    /** Memories injected into this turn's prompt: marked as used, which stops their decay. */
    injectedMemoryIds: string[];
  }): Promise<RecordedTurn> {
    const rows = [
      ...latestUserMessages(turn.messages).map((content) => ({ role: 'user', content })),
      ...(turn.reply ? [{ role: 'assistant', content: turn.reply }] : []),
    ].filter((row) => row.content.trim() !== '');
    if (rows.length === 0) return { messageIds: [] };

    const inserted: Array<{ id: string }> = await this.dataSource.query(
      `WITH touched AS (
         UPDATE memories SET last_accessed_at = now() WHERE profile_id = $1 AND id = ANY($8::uuid[]) RETURNING 1
       )
       INSERT INTO messages (profile_id, role, content, request_id, model, extracted_at, trait_overrides)
       SELECT $1, r.role, r.content, $2, $3, CASE WHEN $4::boolean THEN now() END, $7::jsonb
       FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS r(role, content, position)
       ORDER BY r.position
       RETURNING id`,
      [
        turn.profileId,
        turn.requestId,
        turn.model,
        turn.skipExtraction,
        rows.map((row) => row.role),
        rows.map((row) => stripNul(row.content)),
        turn.traitOverrides.length > 0 ? JSON.stringify(turn.traitOverrides) : null,
        turn.injectedMemoryIds,
      ],
    );
    const messageIds = inserted.map((row) => row.id);
    if (!turn.skipExtraction) {
      const event: ConversationRecordedEvent = { profileId: turn.profileId, messageIds };
      this.events.emit(CONVERSATION_RECORDED, event);
    }
    return { messageIds };
  }
}

/** The text of the user messages that follow the last assistant message: this turn's question. */
export function latestUserMessages(messages: ChatMessage[]): string[] {
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages
    .slice(lastAssistant + 1)
    .filter((message) => message.role === 'user')
    .map((message) => messageText(message.content));
}

function stripNul(text: string): string {
  return text.includes('\u0000') ? text.split('\u0000').join('') : text;
}
