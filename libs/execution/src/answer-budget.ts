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
  /** Bytes held per caller (BudgetClaim.caller); an entry at 0 is removed. */
  private readonly heldBy = new Map<string, number>();

  /**
   * @param maxBytes execution.maxInFlightAnswerBytes
   * @param maxPerCaller the most of it one caller's answers may hold at once (with mcp.auth on)
   */
  constructor(
    readonly maxBytes: number,
    readonly maxPerCaller: number = maxBytes,
  ) {}

  /**
   * The process's one budget, for the executors of both kinds of source. One caller holds at
   * most a quarter of it, or one largest answer (`maxResponseBytes`) where that is more: so a
   * caller whose answers are large and slow never leaves the others' answers no room.
   */
  static of(config: GatewayConfig): AnswerBudget {
    const { maxInFlightAnswerBytes, maxResponseBytes } = config.mcp.execution;
    return new AnswerBudget(
      maxInFlightAnswerBytes,
      Math.min(
        maxInFlightAnswerBytes,
        Math.max(Math.floor(maxInFlightAnswerBytes / 4), maxResponseBytes),
      ),
    );
  }

  /** Bytes currently held by calls in flight. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Takes `bytes` for `claim`; false (and nothing taken) when that would pass the budget, or
   * the share of the claim's caller.
   */
  take(claim: BudgetClaim, bytes: number): boolean {
    if (this.held + bytes > this.maxBytes) return false;
    const { caller } = claim;
    if (caller !== undefined) {
      const mine = (this.heldBy.get(caller) ?? 0) + bytes;
      if (mine > this.maxPerCaller) return false;
      this.heldBy.set(caller, mine);
    }
    this.held += bytes;
    claim.bytes += bytes;
    return true;
  }

  /** Gives back everything `claim` took (once; a second call gives nothing). */
  release(claim: BudgetClaim): void {
    this.held -= claim.bytes;
    const { caller } = claim;
    if (caller !== undefined && claim.bytes > 0) {
      const left = (this.heldBy.get(caller) ?? claim.bytes) - claim.bytes;
      if (left <= 0) this.heldBy.delete(caller);
      else this.heldBy.set(caller, left);
    }
    claim.bytes = 0;
  }
}

export interface BudgetClaim {
  bytes: number;
  /** Whose answer it is (callerName; with mcp.auth on): its bytes count in that caller's share. */
  readonly caller?: string;
}
