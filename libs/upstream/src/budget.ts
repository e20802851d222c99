import { cancelledFailure, timeoutFailure } from './http-exchange';
import type { UpstreamSignal } from './upstream-types';

/**
 * One caller's deadline and signal, shared by every HTTP exchange made on its behalf (connect,
 * re-initialize, the request, its repeat): the deadline counts from the call, not per exchange.
 */
export class Budget {
  private readonly endsAt: number;

  /**
   * @param millis the deadline as given, in ms (what a `timeout` message names)
   * @param signal the caller's abort signal
   * @param leftMillis time actually left, in ms, when less than `millis` (a shared attempt
   *   started on behalf of a caller that has used part of its deadline)
   */
  constructor(
    readonly millis: number,
    readonly signal?: UpstreamSignal,
    leftMillis: number = millis,
  ) {
    this.endsAt = performance.now() + leftMillis;
  }

  /** Time left in ms (may be ≤ 0). */
  left(): number {
    return this.endsAt - performance.now();
  }

  /** Throws `cancelled` once the signal aborted, `timeout` once no time is left. */
  check(): void {
    if (this.signal?.aborted === true) throw cancelledFailure();
    if (this.left() <= 0) throw timeoutFailure(this.millis);
  }

  /**
   * `promise`, but settled no later than this budget allows: `timeout` when the time is up,
   * `cancelled` when the signal aborts first. `promise` itself goes on (it may be shared).
   */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const { signal } = this;
      let finished = false;
      const finish = (settle: () => void): void => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const onAbort = (): void => finish(() => reject(cancelledFailure()));
      const timer = setTimeout(
        () => finish(() => reject(timeoutFailure(this.millis))),
        Math.max(0, this.left()),
      );
      if (signal?.aborted === true) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => finish(() => resolve(value)),
        (err: Error) => finish(() => reject(err)),
      );
    });
  }
}
