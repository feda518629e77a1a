import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { BackgroundWork } from '../common/background-work';
import { CONVERSATION_RECORDED, ConversationRecordedEvent } from '../messages/conversation-events';
import { ExtractionWorker } from './extraction-worker';

/** Starts extraction when a chat turn has been stored; the work itself is the worker's. */
@Injectable()
export class ExtractionListener {
  constructor(
    private readonly worker: ExtractionWorker,
    private readonly background: BackgroundWork,
  ) {}

  @OnEvent(CONVERSATION_RECORDED)
  onConversationRecorded(event: ConversationRecordedEvent): void {
    this.background.run('extraction', () => this.worker.schedule(event.profileId));
  }
}
