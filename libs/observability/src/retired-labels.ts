/**
 * Label values (an upstream id, a tool name) whose metric series were dropped, and when: a call
 * that was in flight then must not bring them back when it ends (docs/operations.md §3
 * "Metrics"). Remembered for `keepMs` (longer than any call may last), then forgotten, so
 * sources and tools that come and go do not grow this without end.
 */
export class RetiredLabels {
  private readonly since = new Map<string, number>();

  constructor(
    private readonly keepMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** These values' series were dropped now. */
  retire(values: readonly string[]): void {
    const now = this.now();
    for (const [value, at] of this.since) if (now - at > this.keepMs) this.since.delete(value);
    for (const value of values) this.since.set(value, now);
  }

  /** The value is in use again (an upstream registered anew under the same id). */
  revive(value: string): void {
    this.since.delete(value);
  }

  /**
   * Whether what happened to `value` over the last `lastedSeconds` (a call's duration; default:
   * at any time) belongs to series that were dropped after it started: such a record is not
   * kept. Nothing is read of the clock while nothing is retired (every call asks).
   */
  dropped(value: string, lastedSeconds?: number): boolean {
    if (this.since.size === 0) return false;
    const at = this.since.get(value);
    if (at === undefined) return false;
    const now = this.now();
    if (now - at > this.keepMs) {
      this.since.delete(value);
      return false;
    }
    return lastedSeconds === undefined || now - lastedSeconds * 1000 <= at;
  }
}
