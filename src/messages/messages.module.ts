import { Module } from '@nestjs/common';
import { ProfilesModule } from '../profiles/profiles.module';
import { TurnRecorder } from './turn-recorder';
import { TurnsController } from './turns.controller';
import { TurnsRepository } from './turns.repository';
import { TurnsService } from './turns.service';

/** The stored conversation messages: the recorder of completed turns, and the turns read back. */
@Module({
  imports: [ProfilesModule],
  controllers: [TurnsController],
  providers: [TurnRecorder, TurnsRepository, TurnsService],
  exports: [TurnRecorder],
})
export class MessagesModule {}
