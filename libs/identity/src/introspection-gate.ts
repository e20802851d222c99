import { createHash } from 'node:crypto';
import type { IntrospectionClient, IntrospectionResult } from './introspection-client';
import { ExpiringCache } from './source-credentials/expiring-cache';

/** Most inactive answers remembered at once (oldest dropped first). */
const INACTIVE_CACHE_ENTRIES = 10_000;

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
 * (docs/security.md, "Opaque tokens"): requests with the same token share one introspection
 * in flight; a refused answer (inactive, expired, another audience…) is reused for
 * `inactiveCacheMs`, so a junk token repeated costs one call; at most `maxConcurrent`
 * requests are in flight, the rest wait in order for a slot (at most `slotWaitMs`, then
 * `unavailable`). An `unavailable` answer is never remembered.
 */
export class IntrospectionGate {
  /** Refused answers by token digest; single flight for every answer (ExpiringCache). */
  private readonly answers = new ExpiringCache<IntrospectionResult>(
    () => performance.now(),
    INACTIVE_CACHE_ENTRIES,
  );
  private running = 0;
  private readonly waiting: { grant: (ok: boolean) => void; timer: NodeJS.Timeout }[] = [];

  constructor(
    private readonly client: IntrospectionClient,
    private readonly options: IntrospectionGateOptions,
  ) {}

  introspect(token: string): Promise<IntrospectionResult> {
    return this.answers.get(keyOf(token), () => this.run(token));
  }

  /** One introspection in a slot; only a refused answer is kept (an active or unavailable one expires at once). */
  private async run(token: string): Promise<{ value: IntrospectionResult; refreshAt: number }> {
    const now = performance.now();
    if (!(await this.slot())) return { value: BUSY, refreshAt: now };
    try {
      const result = await this.client.introspect(token, Math.floor(Date.now() / 1000));
      const refused = !result.active && result.unavailable !== true;
      return {
        value: result,
        refreshAt: refused ? performance.now() + this.options.inactiveCacheMs : now,
      };
    } finally {
      this.release();
    }
  }

  /** A slot at once when one is free; else waits in order, false after slotWaitMs. */
  private slot(): Promise<boolean> {
    if (this.running < this.options.maxConcurrent) {
      this.running += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entry = {
        grant: resolve,
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(entry);
          if (at >= 0) this.waiting.splice(at, 1);
          resolve(false);
        }, this.options.slotWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.running -= 1;
      return;
    }
    // the slot passes straight to the next waiter: `running` stays the same
    clearTimeout(next.timer);
    next.grant(true);
  }
}
