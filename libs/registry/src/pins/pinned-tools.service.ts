import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayMetrics } from '@app/observability';
import type { CatalogTool } from '../catalog/catalog-tool';
import { PIN_STORE, type PinStore } from './pin-store';
import {
  ToolPins,
  type ApprovalRefusal,
  type HeldTool,
  type Screened,
  type SourceReviewView,
  type ToolApproval,
} from './tool-pins';

/** How often a replica asks the shared store whether approvals changed, in ms. */
export const PIN_SYNC_MILLIS = 2_000;

/** What an approval request got: the tools approved, and why the others were not. */
export interface ApprovalOutcome {
  readonly approved: readonly string[];
  readonly refused: readonly ApprovalRefusal[];
  /** false when the shared store did not take the approvals (they hold on this replica only). */
  readonly shared: boolean;
}

/**
 * Pinned tool definitions across replicas (docs/operations.md §6 "Pinned tool definitions"):
 * the registry screens each merged catalog here (ToolPins); an operator's approval is written
 * to the shared store (PinStore) and the catalog published again, on this replica at once and on
 * the others when they next read the store's counter (every PIN_SYNC_MILLIS).
 */
@Injectable()
export class PinnedTools implements OnApplicationShutdown {
  private readonly logger = new Logger('Registry');
  private readonly pins = new ToolPins();
  private readonly changedListeners = new Set<() => Promise<void>>();
  private seenVersion?: string;
  private timer?: NodeJS.Timeout;
  private syncing = false;

  constructor(
    @Optional() @Inject(PIN_STORE) private readonly store: PinStore | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {}

  /** Told when approvals changed (here or on another replica): the catalog is to be published again. */
  onChanged(listener: () => Promise<void>): void {
    this.changedListeners.add(listener);
  }

  /** Part of the catalog's content key: an approval publishes the catalog again. */
  get version(): number {
    return this.pins.version;
  }

  /** Reads the shared approvals before the first catalog, then keeps reading them. Never throws. */
  async start(): Promise<void> {
    if (this.store === null || this.timer !== undefined) return;
    await this.sync();
    this.timer = setInterval(() => void this.sync(), PIN_SYNC_MILLIS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.store?.close();
  }

  screen(tools: readonly CatalogTool[], now: number): Screened {
    return this.pins.screen(tools, now);
  }

  /** The catalog with `screened` was published: its held tools are the ones served as held. */
  commit(screened: Screened): void {
    this.pins.commit(screened.held);
    if (screened.moved.length > 0) void this.store?.write(screened.moved, false);
    const bySource = new Map<string, number>();
    for (const tool of screened.held.values())
      bySource.set(tool.sourceId, (bySource.get(tool.sourceId) ?? 0) + 1);
    this.metrics?.toolsHeldForReview(bySource);
  }

  held(name: string): HeldTool | undefined {
    return this.pins.held(name);
  }

  reviews(): ReadonlyMap<string, SourceReviewView> {
    return this.pins.reviews();
  }

  /**
   * Approves held tools of one source by the digests the operator reviewed, shares the
   * approvals, and has the catalog published again.
   */
  async approve(
    sourceId: string,
    tools: readonly { readonly name: string; readonly digest: string }[],
    actor: string,
    now: number,
  ): Promise<ApprovalOutcome> {
    const { approved, names, refused } = this.pins.approve(sourceId, tools, actor, now);
    let shared = true;
    if (approved.length > 0) {
      shared = this.store === null ? false : await this.store.write(approved, true);
      this.logger.log(
        `${approved.length} pinned tool definition(s) of ${sourceId} approved by ${actor}: ${names.join(', ')}`,
      );
      // published here before the answer: the approver sees the tool served when it returns
      await this.changed();
    }
    return { approved: names, refused, shared };
  }

  private async changed(): Promise<void> {
    await Promise.all([...this.changedListeners].map((listener) => listener()));
  }

  /** Reads the store's counter and, when it moved, every approval. */
  private async sync(): Promise<void> {
    if (this.store === null || this.syncing) return;
    this.syncing = true;
    try {
      const version = await this.store.version();
      if (version === undefined || version === this.seenVersion) return;
      const approvals: ReadonlyMap<string, ToolApproval> | undefined = await this.store.readAll();
      if (approvals === undefined) return;
      // A store that lost its data (Redis restarted empty, flushed, failed over to an empty
      // replica) lacks approvals this replica holds: written back, not forgotten. Approvals are
      // only ever added, so a missing one is never an operator's doing; and another replica may
      // have written back first without one it had not read yet, so every replica checks.
      const lacking = this.pins
        .approvalEntries()
        .filter(([key, mine]) => (approvals.get(key)?.approvedAt ?? -1) < mine.approvedAt);
      if (lacking.length > 0) {
        this.logger.warn(
          `The store of pinned tool approvals lacks ${lacking.length} approval(s) this replica holds (it lost its data: Redis restarted empty, was flushed or failed over); writing them back`,
        );
        // not written: the next sync tries again; written: the next sync reads the merged store
        await this.store.write(lacking, true);
        return;
      }
      this.seenVersion = version;
      if (this.pins.replaceApprovals(approvals)) await this.changed();
    } catch (err) {
      this.logger.error(
        `Publishing the catalog after approvals changed failed (${err instanceof Error ? err.name : typeof err}); the next change or round publishes it`,
      );
    } finally {
      this.syncing = false;
    }
  }
}
