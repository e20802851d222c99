import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayMetrics } from '@app/observability';
import type { BundleDefinition } from '@app/config';
import { Clock, RegistryService, type BundlePullResult } from '@app/registry';
import { ManifestFetcher } from './manifest-fetcher.service';

/**
 * Runs refresh rounds: every enabled bundle pulled concurrently (contract §6 "동시 조회"),
 * then the results handed to the registry in one piece. One round at a time: callers that
 * arrive while a round runs join it (§8 not-found refresh) instead of starting another.
 */
@Injectable()
export class BundleRefreshService {
  private readonly logger = new Logger('Discovery');
  private inFlight?: Promise<void>;
  private lastRoundFinishedAt = Number.NEGATIVE_INFINITY;
  private readonly minIntervalMs: number;

  constructor(
    private readonly fetcher: ManifestFetcher,
    private readonly registry: RegistryService,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.minIntervalMs = config.mcp.registry.notFoundRefreshMinIntervalMillis;
  }

  /** Starts a round, or joins the one already running. Resolves when that round is applied; never rejects. */
  refreshNow(): Promise<void> {
    if (this.inFlight === undefined) {
      this.inFlight = this.runRound().finally(() => {
        this.inFlight = undefined;
        this.lastRoundFinishedAt = performance.now();
      });
    }
    return this.inFlight;
  }

  /**
   * The contract §8 refresh for a tools/call naming an unknown tool: joins a running round,
   * or starts one unless the last round finished less than notFoundRefreshMinIntervalMillis
   * ago (that round already answered; a burst of unknown names must not become a burst of
   * manifest pulls on every Tool Service).
   */
  refreshForUnknownTool(): Promise<void> {
    if (
      this.inFlight === undefined &&
      performance.now() - this.lastRoundFinishedAt < this.minIntervalMs
    ) {
      return Promise.resolve();
    }
    return this.refreshNow();
  }

  /** A scheduled tick: skipped when a round is still running (one refresh at a time). */
  async tick(): Promise<void> {
    if (this.inFlight !== undefined) {
      this.logger.warn('Scheduled refresh skipped: the previous round is still running');
      return;
    }
    await this.refreshNow();
  }

  private async runRound(): Promise<void> {
    // Second line of defence (contract §6): pullOne never throws, and neither may the round.
    const started = performance.now();
    try {
      const results = await Promise.all(this.registry.enabledBundles().map((b) => this.pullOne(b)));
      await this.registry.applyRound(results);
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
