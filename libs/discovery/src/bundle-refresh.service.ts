import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayMetrics, inSpan, tracedHere, tracingOn } from '@app/observability';
import { RegistryService } from '@app/registry';
import { SOURCE_PULLERS, type SourcePuller } from './source-puller';

/** A round promised to the misses that arrived since the last round started; not started yet. */
interface PromisedRound {
  readonly done: Promise<void>;
  readonly resolve: () => void;
}

/**
 * Runs refresh rounds: every enabled source of every kind pulled concurrently by its kind's
 * puller (SourcePuller: bundles' manifests, upstreams' lists; contract §6 "동시 조회";
 * docs/operations.md §10 "Lists"), then the results handed to the registry in one piece. One
 * round at a time.
 *
 * The contract §8 refresh for an unknown tool name is answered from a round that *started
 * after the miss*: a round already running when the miss arrived may have fetched its
 * manifests before the tool was published, so it does not count. Misses that arrive before
 * that round starts share it; `notFoundRefreshMinIntervalMillis` (ms between round starts)
 * delays it, never drops it, so a flood of unknown names costs at most one pull per bundle
 * per interval and every miss still gets its refresh.
 */
@Injectable()
export class BundleRefreshService implements OnApplicationShutdown {
  private readonly logger = new Logger('Discovery');
  private running?: Promise<void>;
  private promised?: PromisedRound;
  private promisedTimer?: NodeJS.Timeout;
  private lastRoundStartedAt = Number.NEGATIVE_INFINITY;
  private stopped = false;
  private readonly minIntervalMs: number;

  constructor(
    private readonly registry: RegistryService,
    @Inject(SOURCE_PULLERS) private readonly pullers: readonly SourcePuller[],
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    // An upstream's list_changed refreshes that upstream alone: ListChangedRefresh.
    this.minIntervalMs = config.mcp.registry.notFoundRefreshMinIntervalMillis;
  }

  /** Starts a round, or joins the one already running. Resolves when that round is applied; never rejects. */
  refreshNow(): Promise<void> {
    return this.running ?? this.startRound();
  }

  /**
   * The contract §8 refresh for a tools/call naming an unknown tool. Resolves once a round
   * that started after this call has been applied (or at shutdown); never rejects. The round
   * starts as soon as no round is running and notFoundRefreshMinIntervalMillis have passed
   * since the previous round started.
   */
  refreshForUnknownTool(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.promised !== undefined) return this.promised.done;
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.promised = { done, resolve };
    this.schedulePromisedRound();
    return done;
  }

  /**
   * A scheduled tick: skipped when a round is still running (one refresh at a time). A round
   * promised to misses and waiting for the flood limit starts now instead: it serves both.
   */
  async tick(): Promise<void> {
    if (this.running !== undefined) {
      this.logger.warn('Scheduled refresh skipped: the previous round is still running');
      return;
    }
    if (this.promised !== undefined) {
      await this.startPromisedRound();
      return;
    }
    await this.refreshNow();
  }

  /** Stops promising rounds: a miss still waiting is answered from the catalog as it is. */
  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.promisedTimer);
    this.promisedTimer = undefined;
    const promised = this.promised;
    this.promised = undefined;
    promised?.resolve();
  }

  private startRound(): Promise<void> {
    this.lastRoundStartedAt = performance.now();
    const round = this.runRound().finally(() => {
      this.running = undefined;
      this.schedulePromisedRound();
    });
    this.running = round;
    return round;
  }

  /** Starts the promised round now, or arms one timer for when the flood limit allows it. */
  private schedulePromisedRound(): void {
    if (this.promised === undefined || this.running !== undefined || this.stopped) return;
    clearTimeout(this.promisedTimer);
    this.promisedTimer = undefined;
    // Even with no wait, the round starts on a timer: misses of the same event-loop turn share it.
    const waitMs = Math.max(0, this.lastRoundStartedAt + this.minIntervalMs - performance.now());
    this.promisedTimer = setTimeout(() => {
      this.promisedTimer = undefined;
      void this.startPromisedRound();
    }, waitMs);
  }

  private async startPromisedRound(): Promise<void> {
    const promised = this.promised;
    if (promised === undefined || this.running !== undefined) return;
    clearTimeout(this.promisedTimer);
    this.promisedTimer = undefined;
    this.promised = undefined;
    await this.startRound();
    promised.resolve();
  }

  /** A round, in a trace of its own when traces are on (docs/operations.md §3 "Traces"). */
  private runRound(): Promise<void> {
    if (!tracingOn()) return this.runRoundUntraced();
    return inSpan('refresh round', { parent: 'root' }, () => this.runRoundUntraced());
  }

  private async runRoundUntraced(): Promise<void> {
    // Second line of defence (contract §6): a puller never rejects, and neither may the round.
    const started = performance.now();
    try {
      // Every kind of source is pulled concurrently; the round is applied in one piece.
      const traced = tracedHere();
      const pulls = await Promise.all(this.pullers.map((puller) => puller.pullAll(traced)));
      await this.registry.applyPulls(pulls);
      this.metrics?.refreshRound((performance.now() - started) / 1000);
    } catch (err) {
      this.logger.error(
        `Refresh round failed unexpectedly (${err instanceof Error ? err.name : typeof err}); the catalog is unchanged`,
      );
    }
  }
}
