import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InputHandoff } from './input-handoff';

/** Most nonces this replica remembers; beyond it the oldest are forgotten first. */
const MAX_REMEMBERED = 100_000;
/** How often expired nonces are dropped, ms. */
const SWEEP_EVERY_MS = 30_000;

/**
 * One-time use of the gateway's `requestState` envelopes (wire notes §4 "State and security":
 * one-time use is the server's to enforce;
 * docs/operations.md §11 "Multi round-trip and era bridging"). An envelope's nonce is spent by the
 * first retry that carries it: on every replica through Redis (InputHandoff.takeOnce) when
 * REDIS_URL is set, else on this replica only (docs/operations.md). A nonce is remembered until its
 * envelope expires, so memory is bounded by the retries of one `requestStateTtlSeconds` and by
 * MAX_REMEMBERED; past it the oldest are forgotten and, without Redis (or with Redis not answering),
 * every envelope expiring no later than one of them is refused as spent (fail closed); with Redis,
 * Redis decides for those.
 */
@Injectable()
export class SpentStates implements OnModuleDestroy {
  /** nonce → expiry (ms since the epoch), in insertion order. */
  private readonly remembered = new Map<string, number>();
  /**
   * The latest expiry among nonces forgotten before they expired (past MAX_REMEMBERED): an
   * envelope expiring no later is refused as spent when it is not remembered, because it may
   * have been one of them (fail closed: a replay must never pass for a first retry).
   */
  private forgottenUntil = 0;
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
    for (const [nonce, expiresAt] of this.remembered)
      if (expiresAt > now) entries.push([nonce, expiresAt - now]);
    await this.handoff.restoreSpent(entries);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /**
   * Spends `nonce` until `expiresAt` (ms since the epoch).
   * @returns false when it was spent before (here, or on another replica through Redis)
   */
  async spend(nonce: string, expiresAt: number): Promise<boolean> {
    if (this.remembered.has(nonce)) return false;
    // forgotten here (past MAX_REMEMBERED): Redis, where every spent nonce is kept until its
    // envelope expires, decides; without it, or when it cannot answer, refused (fail closed)
    // (takeOnce answers undefined for both)
    if (expiresAt <= this.forgottenUntil)
      return (await this.handoff.takeOnce(nonce, expiresAt - Date.now())) === true;
    // remembered before Redis answers: a second retry racing this one on this replica loses
    this.remembered.set(nonce, expiresAt);
    if (this.remembered.size > this.maxRemembered) {
      this.sweep(Date.now());
      for (const [oldest, until] of this.remembered) {
        if (this.remembered.size <= this.maxRemembered) break;
        this.remembered.delete(oldest);
        this.forgottenUntil = Math.max(this.forgottenUntil, until);
      }
    }
    return (await this.handoff.takeOnce(nonce, expiresAt - Date.now())) !== false;
  }

  /**
   * Un-spends `nonce`: its retry never reached the call it belongs to (the replica holding it
   * could not be reached), so the same envelope may be retried, on any replica.
   */
  async refund(nonce: string): Promise<void> {
    this.remembered.delete(nonce);
    await this.handoff.giveBack(nonce);
  }

  private sweep(now: number): void {
    for (const [nonce, expiresAt] of this.remembered)
      if (expiresAt <= now) this.remembered.delete(nonce);
  }
}
