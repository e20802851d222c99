import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type BundleDefinition, type GatewayConfig } from '@app/config';
import { GatewayMetrics } from '@app/observability';
import { CatalogSnapshot, diffCatalogs } from './catalog/catalog-snapshot';
import { mergeCatalog, type MergeInput } from './catalog/merge-catalog';
import { OutputValidators } from './catalog/output-validators';
import { Clock } from './clock';
import { problemText, type PullErrorType } from './manifest/manifest-errors';
import type { AcceptedManifest } from './manifest/manifest.types';
import { SchemaChecker } from './manifest/schema-checker';
import { createHash } from 'node:crypto';
import { parseJsonSliced } from './manifest/sliced-json';
import {
  validateManifest,
  type ManifestExpectations,
  type ManifestValidation,
} from './manifest/validate-manifest';
import { unpackTools } from './manifest/manifest-transfer';
import { WORKER_MIN_BYTES, WorkerValidator } from './manifest/worker-validator';
import type { BundlePullResult } from './pull-result';
import { LAST_GOOD_STORE, type LastGoodStore, type StoreStatus } from './redis/last-good-store';
import {
  BundleRecord,
  type BundleStatusView,
  type CopySource,
  type LastGoodCopy,
} from './state/bundle-record';

/** How many tool names a catalog-change log line lists per kind of change. */
const LOGGED_NAMES = 50;

/** Strict UTF-8 (a BOM is dropped): a manifest that is not UTF-8 is not JSON (RFC 8259). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** What /actuator/toolBundles returns. */
export interface ToolBundlesView {
  readonly identity: string;
  readonly ready: boolean;
  readonly catalog: {
    readonly published: boolean;
    readonly toolCount: number;
    readonly publishedAt: string | null;
    /** Why the last merge kept the previous catalog (an error type name), null after a good merge. */
    readonly lastRejectionReason: PullErrorType | null;
  };
  /** The shared last-good store: configured, reachable, last failure type. */
  readonly redis: StoreStatus;
  readonly bundles: readonly BundleStatusView[];
}

/** A copy adopted without a pull of this replica: a Redis last-good (warm start). */
export interface StoredCopy {
  readonly manifest: AcceptedManifest;
  readonly fetchedAt: Date;
}

interface Candidate {
  readonly copy: LastGoodCopy;
  readonly pulled: boolean;
}

/** Why a bundle's copy was not adopted: the type name, and for validation failures the detail. */
interface Failure {
  readonly errorType: PullErrorType;
  readonly detail?: string;
}

/**
 * Owns every bundle's last-good copy and the published catalog (contract §6, §7, §11).
 * Discovery hands it each round's pull results; McpModule reads `current()`. The catalog
 * reference is swapped whole, so readers never see a half-built one.
 */
@Injectable()
export class RegistryService {
  private readonly logger = new Logger('Registry');
  private readonly records: ReadonlyMap<string, BundleRecord>;
  private readonly schemas = new SchemaChecker();
  private readonly outputValidators = new OutputValidators();
  private readonly worker = new WorkerValidator();
  /**
   * Digests of the schemas the worker found to compile, newline-separated and handed back to
   * the next worker as they are: the event loop never splits or stores them one by one.
   */
  private workerGoodSchemas = '';
  private snapshot?: CatalogSnapshot;
  private firstRoundDone = false;
  private skippedUnchanged = false;
  private lastRejectionReason?: PullErrorType;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly clock: Clock,
    @Optional() @Inject(LAST_GOOD_STORE) private readonly store: LastGoodStore | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.records = new Map(config.bundles.map((b) => [b.id, new BundleRecord(b)]));
  }

  /** The published catalog, or undefined while none can be published (contract §1: all or nothing). */
  current(): CatalogSnapshot | undefined {
    return this.snapshot;
  }

  /** contract §6: ready once the first pull attempt is done and a usable snapshot exists. */
  isReady(): boolean {
    return this.firstRoundDone && this.snapshot !== undefined;
  }

  get firstPullAttemptDone(): boolean {
    return this.firstRoundDone;
  }

  /** The bundles to pull: enabled ones, in config order. */
  enabledBundles(): readonly BundleDefinition[] {
    return this.config.bundles.filter((b) => b.enabled);
  }

  /** true until this bundle's first pull attempt has been applied (fallback files are read only then). */
  isFirstAttempt(bundleId: string): boolean {
    return this.records.get(bundleId)?.lastAttemptAt === undefined;
  }

  /** true when the bundle has no last-good copy at all (a fallback file may be adopted). */
  hasNoCopy(bundleId: string): boolean {
    return this.records.get(bundleId)?.lastGood === undefined;
  }

  view(): ToolBundlesView {
    const now = this.clock.now();
    return {
      identity: this.config.mcp.identity,
      ready: this.isReady(),
      catalog: {
        published: this.snapshot !== undefined,
        toolCount: this.snapshot?.toolCount ?? 0,
        publishedAt: this.snapshot?.publishedAt.toISOString() ?? null,
        lastRejectionReason: this.lastRejectionReason ?? null,
      },
      redis: this.store?.status() ?? {
        configured: false,
        available: null,
        lastFailureReason: null,
      },
      bundles: [...this.records.values()].map((r) => r.view(now)),
    };
  }

  /**
   * Runs once before the first pull (contract §11 "Redis warm start 후 즉시 preload"): adopts the
   * shared last-good copies, if a store is configured. Never throws.
   */
  async warmStart(): Promise<void> {
    if (this.store === null) return;
    const ids = this.enabledBundles().map((b) => b.id);
    const stored = await this.store.load(ids);
    const copies = new Map<string, StoredCopy>();
    for (const [bundleId, entry] of stored) {
      const record = this.records.get(bundleId);
      if (record === undefined) continue;
      // A stored copy passes the same validation as a pull: garbage is a miss, never a catalog.
      const checked = await this.validate(record, entry.body, 'redis', entry.fetchedAt);
      if ('errorType' in checked) continue;
      copies.set(bundleId, checked);
      this.logger.log(
        `Bundle ${bundleId}: warm start from the Redis copy (revision ${checked.manifest.revision ?? 'none'}, ` +
          `pulled ${entry.fetchedAt.toISOString()} by ${entry.writtenBy})`,
      );
    }
    await this.adoptStoredCopies(copies);
  }

  /**
   * Adopts copies kept elsewhere (Redis last-good) for bundles that have nothing newer in
   * memory, then publishes a catalog if every enabled bundle now has a copy. A stored copy
   * never replaces a copy this replica already holds.
   */
  async adoptStoredCopies(copies: ReadonlyMap<string, StoredCopy>): Promise<void> {
    const candidates = new Map<string, Candidate>();
    for (const [bundleId, stored] of copies) {
      const record = this.records.get(bundleId);
      if (!record?.definition.enabled) continue;
      if (record.lastGood && record.lastGood.fetchedAt >= stored.fetchedAt) continue;
      if (record.lastGood?.source === 'remote') continue;
      candidates.set(bundleId, {
        copy: { manifest: stored.manifest, source: 'redis', fetchedAt: stored.fetchedAt },
        pulled: false,
      });
    }
    if (candidates.size === 0) return;
    await this.publish(candidates, new Map());
  }

  /**
   * Applies one refresh round: validates every pulled manifest (contract §5, §7.1), keeps the
   * last good copy of every bundle that failed (§6), and publishes the merged catalog when
   * every enabled bundle has a copy and the aggregate passes §7.3/§7.6; otherwise the
   * previous catalog stays.
   */
  async applyRound(results: readonly BundlePullResult[]): Promise<void> {
    const candidates = new Map<string, Candidate>();
    const failures = new Map<string, Failure>();
    for (const result of results) {
      const record = this.records.get(result.bundleId);
      if (!record?.definition.enabled) continue;
      record.lastAttemptAt = result.attemptedAt;
      if (result.kind === 'manifest') {
        const source = record.definition.manifestFile === undefined ? 'remote' : 'fixture';
        const copy = await this.adoptRaw(
          record,
          result.raw,
          source,
          result.attemptedAt,
          result.digest,
        );
        if ('errorType' in copy) failures.set(record.definition.id, copy);
        else candidates.set(record.definition.id, { copy, pulled: true });
        continue;
      }
      failures.set(record.definition.id, { errorType: result.errorType });
      this.logger.warn(
        `Bundle ${record.definition.id}: manifest pull failed (${result.errorType}: ${result.detail}); ` +
          (record.lastGood
            ? `serving the last good copy (revision ${record.lastGood.manifest.revision ?? 'none'})`
            : 'no copy to serve yet'),
      );
      if (result.fallbackRaw !== undefined && record.lastGood === undefined) {
        const copy = await this.adoptRaw(record, result.fallbackRaw, 'fallback', this.clock.now());
        if (!('errorType' in copy)) {
          candidates.set(record.definition.id, { copy, pulled: false });
          this.logger.warn(
            `Bundle ${record.definition.id}: first remote pull failed; serving its local fallbackManifestFile`,
          );
        }
      }
    }
    // The schema cache keeps what this round checked; after a round that skipped unchanged
    // manifests it keeps everything, or their schemas would all be compiled again next time.
    if (results.length >= this.enabledBundles().length && !this.skippedUnchanged)
      this.schemas.retainOnlySeen();
    this.skippedUnchanged = false;
    try {
      await this.publish(candidates, failures);
    } finally {
      // The first attempt is over even if publishing failed unexpectedly (readiness, §6).
      this.firstRoundDone = true;
    }
  }

  /**
   * A pulled manifest: unchanged since the last good copy (same digest) it is adopted as it
   * is, without decoding or parsing; a large one is decoded, parsed and validated in a worker
   * thread (its bytes transferred, not copied); a small one here, parsed in slices.
   */
  private async adoptRaw(
    record: BundleRecord,
    raw: Buffer | string,
    source: CopySource,
    fetchedAt: Date,
    digest?: string,
  ): Promise<LastGoodCopy | Failure> {
    const textDigest = digest ?? createHash('sha1').update(raw).digest('base64url');
    const last = record.lastGood;
    if (last !== undefined && last.textDigest === textDigest && last.source === source) {
      this.skippedUnchanged = true;
      return { manifest: last.manifest, source, fetchedAt, textDigest };
    }
    const size = typeof raw === 'string' ? raw.length : raw.length;
    if (size >= WORKER_MIN_BYTES && this.worker.available) {
      const copy = await this.validateInWorker(record, raw, source, fetchedAt);
      return 'errorType' in copy ? copy : { ...copy, textDigest };
    }
    let text: string;
    try {
      text = typeof raw === 'string' ? raw : STRICT_UTF8.decode(raw);
    } catch {
      return this.notJson(record, source, 'not valid UTF-8');
    }
    let body: unknown;
    try {
      body = await parseJsonSliced(text);
    } catch {
      return this.notJson(record, source, 'not valid JSON');
    }
    const copy = await this.validate(record, body, source, fetchedAt);
    return 'errorType' in copy ? copy : { ...copy, textDigest };
  }

  private notJson(
    record: BundleRecord,
    source: CopySource,
    why: string,
  ): { errorType: PullErrorType } {
    this.logger.warn(
      `Bundle ${record.definition.id}: ${source} manifest is ${why}; the last good copy stays`,
    );
    return { errorType: 'ManifestNotJsonError' };
  }

  /** A large manifest: parsed and validated in a worker thread, off the event loop of /mcp. */
  private async validateInWorker(
    record: BundleRecord,
    raw: Buffer | string,
    source: CopySource,
    fetchedAt: Date,
  ): Promise<LastGoodCopy | Failure> {
    this.logger.debug(
      `Bundle ${record.definition.id}: validating a ${raw.length}-byte manifest in a worker thread`,
    );
    const response = await this.worker.run({
      bytes: typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw,
      expect: this.expectationsOf(record),
      knownGoodSchemas: this.workerGoodSchemas,
    });
    switch (response.kind) {
      case 'not-json':
        return this.notJson(record, source, response.why);
      case 'crashed':
        this.logger.error(
          `Bundle ${record.definition.id}: ${source} manifest could not be validated (${response.name}); the last good copy stays`,
        );
        return { errorType: 'UnexpectedPullError' };
      case 'rejected':
        this.workerGoodSchemas = this.boundedGoodSchemas(response.goodSchemas);
        return this.accepted(record, response.validation, source, fetchedAt);
      case 'accepted': {
        this.workerGoodSchemas = this.boundedGoodSchemas(response.goodSchemas);
        const tools = await unpackTools(response.tools);
        const manifest: AcceptedManifest = {
          bundleId: response.bundleId,
          revision: response.revision,
          fingerprint: response.fingerprint,
          tools,
        };
        return this.accepted(record, { ok: true, manifest }, source, fetchedAt);
      }
    }
  }

  /** The known-good list only grows; past twice a full catalog it starts over (a few recompilations). */
  private boundedGoodSchemas(digests: string): string {
    const limit = 2 * this.config.mcp.discovery.maxToolsTotal * 28;
    return digests.length > limit ? '' : digests;
  }

  private expectationsOf(record: BundleRecord): ManifestExpectations {
    return {
      bundleId: record.definition.id,
      namePrefix: record.definition.namePrefix,
      maxToolsPerBundle: this.config.mcp.discovery.maxToolsPerBundle,
    };
  }

  private async validate(
    record: BundleRecord,
    body: unknown,
    source: CopySource,
    fetchedAt: Date,
  ): Promise<LastGoodCopy | Failure> {
    let result: ManifestValidation;
    try {
      result = await validateManifest(body, this.expectationsOf(record), this.schemas);
    } catch (err) {
      // One bundle's manifest must never sink the round for the others (contract §6).
      this.logger.error(
        `Bundle ${record.definition.id}: ${source} manifest could not be validated (${err instanceof Error ? err.name : typeof err}); the last good copy stays`,
      );
      return { errorType: 'UnexpectedPullError' };
    }
    return this.accepted(record, result, source, fetchedAt);
  }

  /** The copy a valid manifest makes, or the logged rejection of an invalid one. */
  private accepted(
    record: BundleRecord,
    result: ManifestValidation,
    source: CopySource,
    fetchedAt: Date,
  ): LastGoodCopy | Failure {
    if (result.ok) return { manifest: result.manifest, source, fetchedAt };
    // The first problem is what /actuator/toolBundles shows as `detail` (contract §9 safe);
    // the log says the same first, then lists every problem with ajv's words.
    const [first] = result.problems;
    const more = result.problems.length - 1;
    const detail =
      first === undefined
        ? undefined
        : `${first.detail}${more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'} in the log)` : ''}`;
    this.logger.warn(
      `Bundle ${record.definition.id} revision ${result.revision ?? 'none'}: ${source} manifest rejected ` +
        `(${result.errorType})${detail === undefined ? '' : `: ${detail}`}; the last good copy stays. ` +
        `Problems: ${result.problems.map((p) => `[${p.type}] ${problemText(p)}`).join('; ')}`,
    );
    return { errorType: result.errorType, detail };
  }

  /** Merges, and commits candidates only as far as the aggregate allows (contract §7.3, §7.6). */
  private async publish(
    candidates: Map<string, Candidate>,
    failures: Map<string, Failure>,
  ): Promise<void> {
    const enabled = [...this.records.values()].filter((r) => r.definition.enabled);
    const inputsWith = (c: ReadonlyMap<string, Candidate>): MergeInput[] | undefined => {
      const inputs: MergeInput[] = [];
      for (const record of enabled) {
        const manifest = c.get(record.definition.id)?.copy.manifest ?? record.lastGood?.manifest;
        if (manifest === undefined) return undefined;
        inputs.push({ bundle: record.definition, manifest });
      }
      return inputs;
    };

    const inputs = inputsWith(candidates);
    if (inputs !== undefined) {
      const outcome = await this.tryPublish(inputs);
      if (outcome === true) {
        this.lastRejectionReason = undefined;
      } else {
        // Blame the bundles whose new manifest took part, then retry once with their last good copies.
        const changed = outcome.bundleIds.filter((id) => {
          const c = candidates.get(id);
          return (
            c !== undefined &&
            c.copy.manifest.fingerprint !== this.records.get(id)?.lastGood?.manifest.fingerprint
          );
        });
        const blamed =
          changed.length > 0 ? changed : outcome.bundleIds.filter((id) => candidates.has(id));
        for (const id of blamed) {
          candidates.delete(id);
          failures.set(id, { errorType: outcome.errorType });
        }
        this.lastRejectionReason = outcome.errorType;
        this.metrics?.catalogRejected(outcome.errorType);
        this.logger.error(
          `Catalog not published (${outcome.errorType}): ${outcome.detail}; the previous catalog stays. ` +
            `Manifests not adopted: ${blamed.join(', ') || 'none'}`,
        );
        const retry = blamed.length > 0 ? inputsWith(candidates) : undefined;
        // A retry without the blamed manifests may publish the others' changes; the
        // rejection reason stays visible until a round merges cleanly.
        if (retry !== undefined) await this.tryPublish(retry);
      }
    }

    for (const [id, candidate] of candidates) {
      const record = this.records.get(id);
      if (!record) continue;
      record.lastGood = candidate.copy;
      // contract §11: share every adopted remote manifest (a warm start for restarted replicas).
      if (candidate.copy.source === 'remote') this.store?.save(id, candidate.copy);
    }
    for (const [id, candidate] of candidates) {
      if (!candidate.pulled) continue;
      const ended = this.records.get(id)?.recordSuccess(candidate.copy.fetchedAt) ?? 0;
      this.metrics?.manifestPull(id, 'success', candidate.copy.fetchedAt);
      if (ended > 0)
        this.logger.log(
          `Bundle ${id}: recovered after ${ended} failed pull${ended === 1 ? '' : 's'}`,
        );
    }
    for (const [id, failure] of failures) {
      this.records.get(id)?.recordFailure(failure.errorType, failure.detail);
      this.metrics?.manifestPull(id, failure.errorType);
    }
  }

  /** Builds and swaps in the catalog for these inputs; true, or the merge rejection. */
  private async tryPublish(
    inputs: readonly MergeInput[],
  ): Promise<true | { errorType: PullErrorType; detail: string; bundleIds: readonly string[] }> {
    const contentKey = inputs.map((i) => `${i.bundle.id}:${i.manifest.fingerprint}`).join('|');
    if (this.snapshot?.contentKey === contentKey) return true;
    const merged = await mergeCatalog(
      inputs,
      {
        maxToolsTotal: this.config.mcp.discovery.maxToolsTotal,
        maxToolTimeoutMillis: this.config.mcp.discovery.maxToolTimeoutMillis,
      },
      undefined,
      (tool) => this.outputValidators.validatorFor(tool),
    );
    if (!merged.ok) return merged;
    // Validators of tools no longer published are dropped; unchanged ones were reused.
    this.outputValidators.retainUsed();
    const revisions = Object.fromEntries(
      inputs.map((i) => [i.bundle.id, i.manifest.revision ?? null]),
    );
    const next = await CatalogSnapshot.build(merged.tools, contentKey, this.clock.now(), revisions);
    const previous = this.snapshot;
    this.snapshot = next;
    this.metrics?.catalogPublished(next.toolCount);
    const diff = await diffCatalogs(previous, next);
    this.metrics?.forgetTools(diff.removed);
    const revisionChanges = Object.fromEntries(
      inputs.map((i) => [
        i.bundle.id,
        { from: previous?.revisions[i.bundle.id] ?? null, to: i.manifest.revision ?? null },
      ]),
    );
    const revisionText = Object.entries(revisionChanges)
      .map(([id, r]) => `${id} ${r.from ?? 'none'} -> ${r.to ?? 'none'}`)
      .join(', ');
    // Names are listed up to a bound: a 10,000-tool swap must not write a megabyte log line.
    const listed = (names: readonly string[]): string =>
      names.length > LOGGED_NAMES
        ? `${names.slice(0, LOGGED_NAMES).join(', ')}, … ${names.length - LOGGED_NAMES} more`
        : names.join(', ');
    this.logger.log({
      msg:
        `Catalog published: ${next.toolCount} tools (${revisionText}); ` +
        `added [${listed(diff.added)}] removed [${listed(diff.removed)}] changed [${listed(diff.changed)}]`,
      event: 'catalog_published',
      toolCount: next.toolCount,
      revisions: revisionChanges,
      counts: {
        added: diff.added.length,
        removed: diff.removed.length,
        changed: diff.changed.length,
      },
      added: diff.added.slice(0, LOGGED_NAMES),
      removed: diff.removed.slice(0, LOGGED_NAMES),
      changed: diff.changed.slice(0, LOGGED_NAMES),
    });
    return true;
  }
}
