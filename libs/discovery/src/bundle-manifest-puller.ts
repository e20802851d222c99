import { Injectable, Logger } from '@nestjs/common';
import type { BundleDefinition } from '@app/config';
import { Clock, RegistryService, type BundlePullResult } from '@app/registry';
import { ManifestFetcher } from './manifest-fetcher.service';
import { pullEach, type SourcePuller, type SourcePulls } from './source-puller';

/**
 * The bundles' manifests as a refresh round pulls them (contract §6): each enabled bundle's
 * manifest, from its URL or file, with the contract §3 fallback file when the first remote pull
 * fails.
 */
@Injectable()
export class BundleManifestPuller implements SourcePuller {
  readonly kind = 'bundle';
  private readonly logger = new Logger('Discovery');

  constructor(
    private readonly fetcher: ManifestFetcher,
    private readonly registry: RegistryService,
    private readonly clock: Clock,
  ) {}

  async pullAll(traced: boolean): Promise<SourcePulls> {
    const results = await pullEach(
      this.kind,
      this.registry.enabledBundles(),
      (bundle) => this.pullOne(bundle),
      traced,
    );
    return { kind: this.kind, results };
  }

  /** Whether a failure of this pull may serve the fallback file: its first, with no copy held. */
  private mayFallBack(bundle: BundleDefinition): boolean {
    return (
      bundle.fallbackManifestFile !== undefined &&
      this.registry.isFirstAttempt(bundle.id) &&
      this.registry.hasNoCopy(bundle.id)
    );
  }

  /** The bytes of the bundle's fallbackManifestFile; undefined when it cannot be read (logged). */
  private async readFallback(bundle: BundleDefinition): Promise<Buffer | undefined> {
    if (bundle.fallbackManifestFile === undefined) return undefined;
    const fallback = await this.fetcher.readFile(bundle.fallbackManifestFile);
    if (fallback.ok) return fallback.bytes;
    this.logger.error(
      `Bundle ${bundle.id}: fallbackManifestFile unusable (${fallback.errorType}: ${fallback.detail})`,
    );
    return undefined;
  }

  /** Pulls one bundle; a failure is a value, never an exception (contract §6). */
  private async pullOne(bundle: BundleDefinition): Promise<BundlePullResult> {
    const attemptedAt = this.clock.now();
    try {
      const fetched =
        bundle.manifestFile !== undefined
          ? await this.fetcher.readFile(bundle.manifestFile)
          : await this.fetcher.fetch(bundle.manifestUrl);
      if (fetched.ok && 'notModified' in fetched)
        return { bundleId: bundle.id, kind: 'not-modified', attemptedAt };
      if (fetched.ok)
        return {
          bundleId: bundle.id,
          kind: 'manifest',
          raw: fetched.bytes,
          digest: fetched.digest,
          attemptedAt,
          // a first answer that is no valid manifest is a failed first pull too (contract §3,
          // §6): the intake reads the fallback file then, and only then
          ...(this.mayFallBack(bundle) ? { readFallback: () => this.readFallback(bundle) } : {}),
        };
      // contract §3: the fallback file is read only when the first remote pull fails.
      const fallbackRaw = this.mayFallBack(bundle) ? await this.readFallback(bundle) : undefined;
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
