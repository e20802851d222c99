/**
 * When the scheduled refreshes are due (contract §3 "조회 주기와 jitter"): the first at
 * start + interval + jitter, then every interval after that first one, on a monotonic clock
 * in ms. A heartbeat asks `takeDue(now)` and starts a round when it answers true; rounds
 * the heartbeat missed (a blocked event loop, a suspended process) are not made up: the next
 * due time is the first one after `now`, still on the original grid, so the period never
 * drifts by the heartbeat's own lateness.
 */
export class RefreshTimetable {
  private nextDueAt: number;

  /**
   * @param startedAt when the schedule starts, ms on the clock `takeDue` is given
   * @param intervalMs refreshIntervalSeconds × 1000 (> 0)
   * @param firstJitterMs the random extra delay of the first scheduled refresh only (≥ 0)
   */
  constructor(
    startedAt: number,
    private readonly intervalMs: number,
    firstJitterMs: number,
  ) {
    this.nextDueAt = startedAt + intervalMs + firstJitterMs;
  }

  /** The next due time (ms, same clock). */
  get next(): number {
    return this.nextDueAt;
  }

  /** True when a refresh is due at `now`; then moves on to the first due time after `now`. */
  takeDue(now: number): boolean {
    if (now < this.nextDueAt) return false;
    const passed = Math.floor((now - this.nextDueAt) / this.intervalMs) + 1;
    this.nextDueAt += passed * this.intervalMs;
    return true;
  }
}
