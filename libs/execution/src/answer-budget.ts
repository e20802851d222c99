import type { GatewayConfig } from '@app/config';

/**
 * A byte budget shared by every call in flight: the bytes of Tool Service and upstream answers
 * the gateway holds at once (docs/operations.md §1, `execution.maxInFlightAnswerBytes`). A call takes
 * bytes as its answer arrives and gives them all back when its result is built; a call that cannot
 * take what its next chunk needs is ended as "busy" instead of pushing the process past its memory
 * limit.
 */
export class AnswerBudget {
  private held = 0;

  /** @param maxBytes execution.maxInFlightAnswerBytes */
  constructor(readonly maxBytes: number) {}

  /** The process's one budget, for the executors of both kinds of source. */
  static of(config: GatewayConfig): AnswerBudget {
    return new AnswerBudget(config.mcp.execution.maxInFlightAnswerBytes);
  }

  /** Bytes currently held by calls in flight. */
  get heldBytes(): number {
    return this.held;
  }

  /** Takes `bytes` for `claim`; false (and nothing taken) when that would pass the budget. */
  take(claim: BudgetClaim, bytes: number): boolean {
    if (this.held + bytes > this.maxBytes) return false;
    this.held += bytes;
    claim.bytes += bytes;
    return true;
  }

  /** Gives back everything `claim` took (once; a second call gives nothing). */
  release(claim: BudgetClaim): void {
    this.held -= claim.bytes;
    claim.bytes = 0;
  }
}

/** What one call holds of the budget. */
export interface BudgetClaim {
  bytes: number;
}
