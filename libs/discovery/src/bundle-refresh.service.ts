import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { failSpan, GatewayMetrics, inSpan, tracedHere, tracingOn } from '@app/observability';
import type { BundleDefinition } from '@app/config';
import { Clock, RegistryService, type BundlePullResult } from '@app/registry';
import { ManifestFetcher } from './manifest-fetcher.service';
import { UpstreamListPuller } from './upstream-list-puller.service';

/** A round promised to the misses that arrived since the last round started; not started yet. */
interface PromisedRound {
  readonly done: Promise<void>;
  readonly resolve: () => void;
}

/**
 * Runs refresh rounds: every enabled bundle and upstream pulled concurrently (contract §6
 * "동시 조회"; docs/operations.md §10 "Lists"),
 * then the results handed to the registry in one piece. One round at a time.
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
    private readonly fetcher: ManifestFetcher,
    private readonly registry: RegistryService,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional()
    @Inject(UpstreamListPuller)
    private readonly upstreamPuller: UpstreamListPuller | null = null,
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
    // Second line of defence (contract §6): pullOne never throws, and neither may the round.
    const started = performance.now();
    try {
      // Bundles and upstreams are pulled concurrently; the round is applied in one piece.
      const puller = this.upstreamPuller;
      const traced = tracedHere();
      const [results, upstreamResults] = await Promise.all([
        Promise.all(
          this.registry
            .enabledBundles()
            .map((b) =>
              traced ? pullSpan('bundle', b.id, () => this.pullOne(b)) : this.pullOne(b),
            ),
        ),
        puller === null
          ? []
          : Promise.all(
              this.registry
                .enabledUpstreams()
                .map((u) =>
                  traced ? pullSpan('upstream', u.id, () => puller.pull(u)) : puller.pull(u),
                ),
            ),
      ]);
      await this.registry.applyRound(results, upstreamResults);
      this.metrics?.refreshRound((performance.now() - started) / 1000);
    } catch (err) {
      this.logger.error(
        `Refresh round failed unexpectedly (${err instanceof Error ? err.name : typeof err}); the catalog is unchanged`,
      );
    }
  }

  /** Pulls one bundle; a failure is a value, never an exception (contract §6). */
  private async pullOne(bundle: BundleDefinition): Promise<BundlePullResult> {
    const attemptedAt = this.clock.now();
    try {
      const fetched =
        bundle.manifestFile !== undefined
          ? await this.fetcher.readFile(bundle.manifestFile)
          : await this.fetcher.fetch(bundle.manifestUrl);
      if (fetched.ok)
        return {
          bundleId: bundle.id,
          kind: 'manifest',
          raw: fetched.bytes,
          digest: fetched.digest,
          attemptedAt,
        };
      // contract §3: the fallback file is read only when the first remote pull fails.
      let fallbackRaw: Buffer | undefined;
      if (
        bundle.fallbackManifestFile !== undefined &&
        this.registry.isFirstAttempt(bundle.id) &&
        this.registry.hasNoCopy(bundle.id)
      ) {
        const fallback = await this.fetcher.readFile(bundle.fallbackManifestFile);
        if (fallback.ok) fallbackRaw = fallback.bytes;
        else
          this.logger.error(
            `Bundle ${bundle.id}: fallbackManifestFile unusable (${fallback.errorType}: ${fallback.detail})`,
          );
      }
      return {
        bundleId: bundle.id,
        kind: 'failed',
        errorType: fetched.errorType,
        detail: fetched.detail,
        attemptedAt,
        fallbackRaw,
      };
    } catch (err) {
      return {
        bundleId: bundle.id,
        kind: 'failed',
        errorType: 'UnexpectedPullError',
        detail: err instanceof Error ? err.name : typeof err,
        attemptedAt,
      };
    }
  }
}

/** One source's pull in a round's trace: which source, and the error type when it failed. */
function pullSpan<T extends { readonly kind: string; readonly errorType?: string }>(
  kind: 'bundle' | 'upstream',
  id: string,
  pull: () => Promise<T>,
): Promise<T> {
  return inSpan(
    `pull ${kind} ${id}`,
    { attributes: () => ({ 'mcp_gateway.source.kind': kind, 'mcp_gateway.source.id': id }) },
    async () => {
      const result = await pull();
      if (result.kind === 'failed' && result.errorType !== undefined) failSpan(result.errorType);
      return result;
    },
  );
}
