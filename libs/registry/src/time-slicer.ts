import { setImmediate as nextTick } from 'node:timers/promises';

/**
 * Cooperative time slicing for long CPU work off the request path (validating and merging a
 * 10,000-tool catalog): call `maybeYield()` between items and it gives the event loop a turn
 * whenever `budgetMs` of work has passed, so tools/call latency does not stall behind a refresh.
 */
export class TimeSlicer {
  private sliceStart = performance.now();

  constructor(private readonly budgetMs = 8) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.sliceStart < this.budgetMs) return;
    await nextTick();
    this.sliceStart = performance.now();
  }
}
