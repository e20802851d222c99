import { createHash } from 'node:crypto';
import type { IntrospectionClient, IntrospectionResult } from './introspection-client';
import { ExpiringMap } from './expiring-map';
import { ExpiringCache } from './source-credentials/expiring-cache';

/** Most inactive answers remembered at once (expired ones dropped first, then the oldest). */
const INACTIVE_CACHE_ENTRIES = 10_000;
/** Most tokens remembered as recently active (expired ones dropped first, then the oldest). */
const ACTIVE_MEMORY_ENTRIES = 10_000;
/** How long a token that introspected active counts as a returning caller's, ms (at most its exp). */
const ACTIVE_MEMORY_MS = 10 * 60_000;

export interface IntrospectionGateOptions {
  /** Most introspection requests in flight at once (`mcp.auth.introspectionMaxConcurrent`). */
  readonly maxConcurrent: number;
  /** How long a refused answer is reused, ms (`introspectionInactiveCacheSeconds`); 0: never. */
  readonly inactiveCacheMs: number;
  /** Longest wait for a free slot, ms; past it the request is answered `unavailable`. */
  readonly slotWaitMs: number;
}

const BUSY: IntrospectionResult = {
  active: false,
  reason:
    'The access token could not be introspected: the authorization server is busy; retry later',
  unavailable: true,
};

/** The token as a map key: SHA-256, so no map of this gate holds a token. */
function keyOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/**
 * What stands between requests and the authorization server's introspection endpoint
 * (docs/security.md, "Threat model in one page", opaque tokens): requests with the same token share
 * one introspection in flight; a refused answer (inactive, expired, another audience…) is reused
 * for `inactiveCacheMs`, so a junk token repeated costs one call; at most `maxConcurrent`
 * requests are in flight, the rest wait in order for a slot (at most `slotWaitMs`, then
 * `unavailable`). An `unavailable` answer is never remembered.
 *
 * A flood of distinct junk tokens must not starve the callers already known: a token that
 * introspected active in the last ACTIVE_MEMORY_MS (and has not expired) is a returning
 * caller's; returning callers are granted slots before unknown tokens, and unknown tokens
 * never hold the last slot (with `maxConcurrent` above 1), so a returning caller waits at
 * most for one introspection to end, however many unknown ones are queued.
 */
export class IntrospectionGate {
  /** Refused answers by token digest; single flight for every answer (ExpiringCache). */
  private readonly answers = new ExpiringCache<IntrospectionResult>(
    () => performance.now(),
    INACTIVE_CACHE_ENTRIES,
  );
  /** Token digest → until when (performance.now() ms) it counts as a returning caller's. */
  private readonly active = new ExpiringMap<true>(ACTIVE_MEMORY_ENTRIES, () => performance.now());
  private running = 0;
  /** Slots held by unknown tokens (at most `maxConcurrent - 1` when that is above 0). */
  private runningUnknown = 0;
  private readonly waiting: Waiter[] = [];
  private readonly waitingUnknown: Waiter[] = [];

  constructor(
    private readonly client: IntrospectionClient,
    private readonly options: IntrospectionGateOptions,
  ) {}

  introspect(token: string): Promise<IntrospectionResult> {
    const key = keyOf(token);
    return this.answers.get(key, () => this.run(token, key));
  }

  /** One introspection in a slot; only a refused answer is kept (an active or unavailable one expires at once). */
  private async run(
    token: string,
    key: string,
  ): Promise<{ value: IntrospectionResult; refreshAt: number }> {
    const now = performance.now();
    const known = this.active.get(key, now) === true;
    if (!(await this.slot(known))) return { value: BUSY, refreshAt: now };
    try {
      const result = await this.client.introspect(token, Math.floor(Date.now() / 1000));
      if (result.active) this.rememberActive(key, result);
      else if (result.unavailable !== true) this.active.delete(key);
      const refused = !result.active && result.unavailable !== true;
      return {
        value: result,
        refreshAt: refused ? performance.now() + this.options.inactiveCacheMs : now,
      };
    } finally {
      this.release(known);
    }
  }

  private rememberActive(key: string, result: IntrospectionResult): void {
    const exp = result.active ? result.claims.exp : undefined;
    const now = performance.now();
    const untilExp =
      typeof exp === 'number' ? now + (exp * 1000 - Date.now()) : now + ACTIVE_MEMORY_MS;
    this.active.set(key, true, Math.min(untilExp, now + ACTIVE_MEMORY_MS), now);
  }

  /** Slots unknown tokens may hold: all but one, so a returning caller always finds one soon. */
  private get unknownLimit(): number {
    return Math.max(1, this.options.maxConcurrent - 1);
  }

  /** A slot at once when one is free for this kind of token; else waits in order, false after slotWaitMs. */
  private slot(known: boolean): Promise<boolean> {
    if (
      this.running < this.options.maxConcurrent &&
      (known || this.runningUnknown < this.unknownLimit)
    ) {
      this.running += 1;
      if (!known) this.runningUnknown += 1;
      return Promise.resolve(true);
    }
    const queue = known ? this.waiting : this.waitingUnknown;
    return new Promise((resolve) => {
      const entry: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const at = queue.indexOf(entry);
          if (at >= 0) queue.splice(at, 1);
          resolve(false);
        }, this.options.slotWaitMs),
      };
      queue.push(entry);
    });
  }

  /** Frees a slot and grants the next one: returning callers first, unknown tokens within their limit. */
  private release(known: boolean): void {
    this.running -= 1;
    if (!known) this.runningUnknown -= 1;
    const next = this.waiting.shift();
    if (next !== undefined) {
      this.running += 1;
      clearTimeout(next.timer);
      next.grant(true);
      return;
    }
    if (this.runningUnknown >= this.unknownLimit) return;
    const unknown = this.waitingUnknown.shift();
    if (unknown === undefined) return;
    this.running += 1;
    this.runningUnknown += 1;
    clearTimeout(unknown.timer);
    unknown.grant(true);
  }
}

interface Waiter {
  readonly grant: (ok: boolean) => void;
  readonly timer: NodeJS.Timeout;
}
