import { Module } from '@nestjs/common';
import { TurnRecorder } from './turn-recorder';

/** The stored conversation messages: the recorder of completed turns. */
@Module({
  providers: [TurnRecorder],
  exports: [TurnRecorder],
})
export class MessagesModule {}
