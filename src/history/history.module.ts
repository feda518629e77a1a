import { Module } from '@nestjs/common';
import { ProfileHistory } from './profile-history';

/** The record of every change of a profile's memories and traits. */
@Module({
  providers: [ProfileHistory],
  exports: [ProfileHistory],
})
export class HistoryModule {}
