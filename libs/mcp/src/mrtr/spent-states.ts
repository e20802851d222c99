import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InputHandoff } from './input-handoff';

/** Most nonces this replica remembers; beyond it the oldest are forgotten first. */
const MAX_REMEMBERED = 100_000;
/** How often expired nonces are dropped, ms. */
const SWEEP_EVERY_MS = 30_000;

/**
 * What one caller spent: nonce → expiry (ms since the epoch), in insertion order, and the latest
 * expiry among its nonces forgotten before they expired (past its share): an envelope of this
 * caller expiring no later is refused as spent when it is not remembered, because it may have
 * been one of them (fail closed: a replay must never pass for a first retry).
 */
interface CallerSpent {
  readonly remembered: Map<string, number>;
  forgottenUntil: number;
}

/**
 * One-time use of the gateway's `requestState` envelopes (wire notes §4 "State and security":
 * one-time use is the server's to enforce;
 * docs/operations.md §11 "Multi round-trip and era bridging"). An envelope's nonce is spent by the
 * first retry that carries it: on every replica through Redis (InputHandoff.takeOnce) when
 * REDIS_URL is set, else on this replica only (docs/operations.md). A nonce is remembered until its
 * envelope expires, so memory is bounded by the retries of one `requestStateTtlSeconds` and by
 * MAX_REMEMBERED; past it the oldest are forgotten and, without Redis (or with Redis not answering),
 * every envelope expiring no later than one of them is refused as spent (fail closed); with Redis,
 * Redis decides for those. With `mcp.auth` on, what is remembered is kept per caller (an envelope
 * is bound to its caller, so its retry is always that caller's): one caller holds at most a tenth
 * of MAX_REMEMBERED, and past the total the caller that holds the most forgets first, so one
 * caller spending envelopes by the hundred thousand makes only its own fail closed.
 */
@Injectable()
export class SpentStates implements OnModuleDestroy {
  /** By caller (callerKey; '' without auth). */
  private readonly callers = new Map<string, CallerSpent>();
  private total = 0;
  /** MAX_REMEMBERED; a test may lower it. */
  protected readonly maxRemembered: number = MAX_REMEMBERED;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly handoff: InputHandoff) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_EVERY_MS);
    this.sweeper.unref();
    // Redis may have lost what was spent here (an outage, a restart or flush without its data):
    // every nonce still remembered goes back, so a replay on another replica is refused again
    handoff.onStoreRenewed(() => void this.writeBack());
  }

  private async writeBack(): Promise<void> {
    const now = Date.now();
    const entries: [string, number][] = [];
    for (const { remembered } of this.callers.values())
      for (const [nonce, expiresAt] of remembered)
        if (expiresAt > now) entries.push([nonce, expiresAt - now]);
    await this.handoff.restoreSpent(entries);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /**
   * Spends `nonce` until `expiresAt` (ms since the epoch).
   * @param caller callerKey of the retry's caller; undefined without auth
   * @returns false when it was spent before (here, or on another replica through Redis)
   */
  async spend(nonce: string, expiresAt: number, caller?: string): Promise<boolean> {
    let spent = this.callers.get(caller ?? '');
    if (spent === undefined) {
      spent = { remembered: new Map(), forgottenUntil: 0 };
      this.callers.set(caller ?? '', spent);
    }
    if (spent.remembered.has(nonce)) return false;
    // forgotten here (past the caller's share or the total): Redis, where every spent nonce is
    // kept until its envelope expires, decides; without it, or when it cannot answer, refused
    // (fail closed) (takeOnce answers undefined for both)
    if (expiresAt <= spent.forgottenUntil)
      return (await this.handoff.takeOnce(nonce, expiresAt - Date.now())) === true;
    // remembered before Redis answers: a second retry racing this one on this replica loses
    spent.remembered.set(nonce, expiresAt);
    this.total++;
    const share =
      caller === undefined ? this.maxRemembered : Math.max(1, Math.floor(this.maxRemembered / 10));
    if (spent.remembered.size > share || this.total > this.maxRemembered) {
      this.sweep(Date.now());
      this.forgetOldest(spent, share);
      while (this.total > this.maxRemembered) this.forgetOldest(this.heaviest(), 0);
    }
    return (await this.handoff.takeOnce(nonce, expiresAt - Date.now())) !== false;
  }

  /**
   * Un-spends `nonce`: its retry never reached the call it belongs to (the replica holding it
   * could not be reached), so the same envelope may be retried, on any replica.
   */
  async refund(nonce: string, caller?: string): Promise<void> {
    const spent = this.callers.get(caller ?? '');
    if (spent?.remembered.delete(nonce) === true) this.total--;
    await this.handoff.giveBack(nonce);
  }

  /** Forgets the caller's oldest nonces down to `keep` (at least one when `keep` is 0). */
  private forgetOldest(spent: CallerSpent, keep: number): void {
    for (const [oldest, until] of spent.remembered) {
      if (spent.remembered.size <= keep && keep > 0) break;
      spent.remembered.delete(oldest);
      this.total--;
      spent.forgottenUntil = Math.max(spent.forgottenUntil, until);
      if (keep === 0) break;
    }
  }

  /** The caller that holds the most nonces. */
  private heaviest(): CallerSpent {
    let most: CallerSpent | undefined;
    for (const spent of this.callers.values())
      if (most === undefined || spent.remembered.size > most.remembered.size) most = spent;
    return most as CallerSpent;
  }

  private sweep(now: number): void {
    for (const [caller, spent] of this.callers) {
      for (const [nonce, expiresAt] of spent.remembered)
        if (expiresAt <= now) {
          spent.remembered.delete(nonce);
          this.total--;
        }
      // a caller with nothing remembered and nothing forgotten that still counts is dropped
      if (spent.remembered.size === 0 && spent.forgottenUntil <= now) this.callers.delete(caller);
    }
  }
}
