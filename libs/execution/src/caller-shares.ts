import { callerName, type CallerIdentity } from '@app/identity';
import type { GatewayConfig } from '@app/config';

/**
 * The requests one caller may have running on one source at once (docs/operations.md §1,
 * `execution.maxConcurrentCallsPerCaller`): its bundle calls, and its requests to an upstream
 * (calls, reads, parked calls and the listens held for it). Each holds one of the source's
 * connections, so without a share one caller's slow calls or long listens could take every
 * connection (`execution.maxConnectionsPerOrigin`) and every call slot
 * (`maxConcurrentCallsPerBundle`), and the other callers' calls would wait or be refused.
 * Counted per replica, only with `mcp.auth` on (a caller is who its token names); the gateway's
 * own traffic (pulls, session upkeep) is not a caller's.
 */
export class CallerShares {
  /** Running requests per source and caller, `<sourceId>\n<caller>`; an entry at 0 is removed. */
  private readonly running = new Map<string, number>();

  /** @param perCaller the most requests one caller may have running on one source */
  constructor(readonly perCaller: number) {}

  /**
   * The process's shares: `execution.maxConcurrentCallsPerCaller`, or else a quarter of the
   * smaller of a source's connections and call slots (at least 1), so that four callers at
   * their share still leave none of the others without a connection.
   */
  static of(config: GatewayConfig): CallerShares {
    const execution = config.mcp.execution;
    return new CallerShares(
      execution.maxConcurrentCallsPerCaller ??
        Math.max(
          1,
          Math.floor(
            Math.min(execution.maxConnectionsPerOrigin, execution.maxConcurrentCallsPerBundle) / 4,
          ),
        ),
    );
  }

  /**
   * Takes one of the caller's requests on `sourceId`.
   * @returns the function that gives it back (once; later calls do nothing), or undefined when
   *   the caller already has `perCaller` running there; without a caller (auth off, the
   *   gateway's own traffic) always a function, nothing counted
   */
  take(sourceId: string, caller: CallerIdentity | undefined): (() => void) | undefined {
    const name = callerName(caller);
    if (name === undefined) return NOTHING_TAKEN;
    const key = `${sourceId}\n${name}`;
    const running = this.running.get(key) ?? 0;
    if (running >= this.perCaller) return undefined;
    this.running.set(key, running + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left <= 0) this.running.delete(key);
      else this.running.set(key, left);
    };
  }
}

const NOTHING_TAKEN = (): void => undefined;
