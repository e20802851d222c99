import { Injectable } from '@nestjs/common';

/** Wall-clock time behind a provider, so state transitions can be pinned in tests. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
