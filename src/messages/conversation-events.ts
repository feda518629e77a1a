/** Events between modules, by name, with their payloads (ids, never whole objects). */
export const CONVERSATION_RECORDED = 'conversation.recorded';

export interface ConversationRecordedEvent {
  profileId: string;
  messageIds: string[];
}
