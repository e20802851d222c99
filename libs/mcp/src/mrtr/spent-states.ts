import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InputHandoff } from './input-handoff';

/** Most nonces this replica remembers; beyond it the oldest are forgotten first. */
const MAX_REMEMBERED = 100_000;
/** How often expired nonces are dropped, ms. */
const SWEEP_EVERY_MS = 30_000;

/**
 * One-time use of the gateway's `requestState` envelopes (wire notes §4 "State and security":
 * one-time use is the server's to enforce; issue 11 §5). An envelope's nonce is spent by the
 * first retry that carries it: on every replica through Redis (InputHandoff.takeOnce) when
 * REDIS_URL is set, else on this replica only (docs/operations.md). A nonce is remembered
 * until its envelope expires, so memory is bounded by the retries of one
 * `requestStateTtlSeconds` (and by MAX_REMEMBERED).
 */
@Injectable()
export class SpentStates implements OnModuleDestroy {
  /** nonce → expiry (ms since the epoch), in insertion order. */
  private readonly remembered = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly handoff: InputHandoff) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_EVERY_MS);
    this.sweeper.unref();
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
    // remembered before Redis answers: a second retry racing this one on this replica loses
    this.remembered.set(nonce, expiresAt);
    if (this.remembered.size > MAX_REMEMBERED) {
      this.sweep(Date.now());
      for (const oldest of this.remembered.keys()) {
        if (this.remembered.size <= MAX_REMEMBERED) break;
        this.remembered.delete(oldest);
      }
    }
    return (await this.handoff.takeOnce(nonce, expiresAt - Date.now())) !== false;
  }

  private sweep(now: number): void {
    for (const [nonce, expiresAt] of this.remembered)
      if (expiresAt <= now) this.remembered.delete(nonce);
  }
}
