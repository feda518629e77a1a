import { Injectable } from '@nestjs/common';

/** The current time for scheduled jobs; tests replace `now` to move time without waiting. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
