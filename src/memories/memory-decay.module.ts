import { Module } from '@nestjs/common';
import { Clock } from '../common/clock';
import { MemoryDecayService } from './memory-decay.service';

@Module({
  providers: [Clock, MemoryDecayService],
  exports: [Clock, MemoryDecayService],
})
export class MemoryDecayModule {}
