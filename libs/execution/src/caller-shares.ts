import { callerName, type CallerIdentity } from '@app/identity';
import type { GatewayConfig } from '@app/config';

/** Gives a taken request back (once; later calls do nothing). */
export type ShareRelease = () => void;

/** One caller's requests on one source: how many run, and who waits for one to end. */
interface Slot {
  running: number;
  readonly waiting: ((release: ShareRelease) => void)[];
}

/** The release of a request no share was taken for (no caller, or no shares kept). */
export const NO_SHARE: ShareRelease = () => undefined;

/** What ends a wait for a share early: the call's cancellation (an AbortSignal's shape). */
export interface ShareWaitSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * The requests one caller may have running at once on one pool of connections, an origin's
 * (docs/operations.md §1, `execution.maxConcurrentCallsPerCaller`; poolOf): its bundle calls,
 * and its requests to upstreams (calls, reads, parked calls and the listens held for it). Each
 * holds one of the pool's connections, so without a share one caller's slow calls or long listens could take every
 * connection (`execution.maxConnectionsPerOrigin`) and every call slot
 * (`maxConcurrentCallsPerBundle`), and the other callers' calls would wait or be refused. A
 * request past the share waits for one of the caller's own to end, within its own deadline,
 * holding no connection meanwhile (a listen, which would hold one for good, does not wait).
 * Counted per replica, only with `mcp.auth` on (a caller is who its token names); the gateway's
 * own traffic (pulls, session upkeep) is not a caller's.
 */
export class CallerShares {
  /** Per `<pool>\n<caller>` (poolOf); an entry with nothing running or waiting is removed. */
  private readonly slots = new Map<string, Slot>();

  /** @param perCaller the most requests one caller may have running on one source */
  constructor(readonly perCaller: number) {}

  /**
   * The process's shares: `execution.maxConcurrentCallsPerCaller`, or else a quarter of the
   * smaller of a source's connections and call slots (at least 1), so that callers at their
   * share leave the others connections.
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
   * Takes one of the caller's requests on `pool` (poolOf) now.
   * @returns its release, or undefined when the caller already has `perCaller` running there;
   *   without a caller (auth off, the gateway's own traffic) always a release, nothing counted
   */
  take(pool: string, caller: CallerIdentity | undefined): ShareRelease | undefined {
    const key = keyOf(pool, caller);
    if (key === undefined) return NO_SHARE;
    const slot = this.slotOf(key);
    if (slot.running >= this.perCaller) {
      this.dropIfIdle(key, slot);
      return undefined;
    }
    slot.running += 1;
    return this.releaseOf(key, slot);
  }

  /**
   * Takes one of the caller's requests on `pool`, waiting (first come, first served) for
   * one of its own to end when it has `perCaller` running.
   * @returns its release, or undefined when `waitMillis` passed or `signal` aborted first
   */
  acquire(
    pool: string,
    caller: CallerIdentity | undefined,
    waitMillis: number,
    signal?: ShareWaitSignal,
  ): ShareRelease | undefined | Promise<ShareRelease | undefined> {
    const taken = this.take(pool, caller);
    if (taken !== undefined || waitMillis <= 0 || signal?.aborted === true) return taken;
    const key = keyOf(pool, caller) as string;
    const slot = this.slotOf(key);
    return new Promise((resolve) => {
      const done = (release: ShareRelease | undefined): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', gaveUp);
        resolve(release);
      };
      const waiter = (release: ShareRelease): void => done(release);
      const gaveUp = (): void => {
        const at = slot.waiting.indexOf(waiter);
        if (at >= 0) slot.waiting.splice(at, 1);
        this.dropIfIdle(key, slot);
        done(undefined);
      };
      const timer = setTimeout(gaveUp, waitMillis);
      slot.waiting.push(waiter);
      signal?.addEventListener('abort', gaveUp);
    });
  }

  private slotOf(key: string): Slot {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { running: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    return slot;
  }

  private dropIfIdle(key: string, slot: Slot): void {
    if (slot.running === 0 && slot.waiting.length === 0 && this.slots.get(key) === slot)
      this.slots.delete(key);
  }

  /** The release of one running request: handed to the first waiter, else counted down. */
  private releaseOf(key: string, slot: Slot): ShareRelease {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = slot.waiting.shift();
      if (next !== undefined) {
        next(this.releaseOf(key, slot));
        return;
      }
      slot.running -= 1;
      this.dropIfIdle(key, slot);
    };
  }
}

/** Pools by URL, per kind of source, for poolOf; bounded by the sources configured and registered. */
const pools = { bundle: new Map<string, string>(), upstream: new Map<string, string>() };
const MAX_REMEMBERED_POOLS = 10_000;

/**
 * The connection pool a source's requests use: its kind and its URL's origin. Connections are
 * pooled per origin (`execution.maxConnectionsPerOrigin`), so shares are counted per pool, not
 * per source: several sources at one origin are one share. A URL that does not parse is its own.
 */
export function poolOf(kind: 'bundle' | 'upstream', url: string): string {
  const known = pools[kind];
  let pool = known.get(url);
  if (pool === undefined) {
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      origin = url;
    }
    pool = `${kind} ${origin}`;
    if (known.size >= MAX_REMEMBERED_POOLS) known.clear();
    known.set(url, pool);
  }
  return pool;
}

function keyOf(pool: string, caller: CallerIdentity | undefined): string | undefined {
  const name = callerName(caller);
  return name === undefined ? undefined : `${pool}\n${name}`;
}
