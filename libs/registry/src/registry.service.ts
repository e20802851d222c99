import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  GATEWAY_CONFIG,
  type BundleDefinition,
  type GatewayConfig,
  type UpstreamDefinition,
} from '@app/config';
import { GatewayMetrics } from '@app/observability';
import { BundleIntake, type BundleRound, type StoredCopy } from './bundle/bundle-intake';
import { reviewed, type ToolBundlesView, type UpstreamsView } from './source-views';
import type {
  MergeRejectionType,
  PartialSource,
  SourceIntake,
  SourcePulls,
  SourceRound,
} from './source-intake';
import { CatalogExtras, type ResourceConflict } from './catalog/catalog-extras';
import { CatalogHistory, type CatalogHistoryView } from './catalog/catalog-history';
import { CatalogSnapshot, diffCatalogs } from './catalog/catalog-snapshot';
import { mergeCatalog } from './catalog/merge-catalog';
import type { SourceContribution } from './catalog/source-contribution';
import { OutputValidators } from './catalog/output-validators';
import { withOwnViews } from './catalog/own-views';
import { Clock } from './clock';
import { PinnedTools } from './pins/pinned-tools.service';
import type { PullErrorType } from './manifest/manifest-errors';
import type { BundlePullResult } from './pull-result';
import { LAST_GOOD_STORE, type LastGoodStore } from './redis/last-good-store';
import {
  UpstreamIntake,
  type UpstreamPullState,
  type UpstreamRound,
} from './upstream/upstream-intake';
import type { UpstreamPullResult } from './upstream/upstream-pull-result';

/** How many tool names a catalog-change log line lists per kind of change. */
const LOGGED_NAMES = 50;

/** Told of each newly published catalog: the one it replaced (undefined for the first) and the new one. */
export type CatalogPublishedListener = (
  previous: CatalogSnapshot | undefined,
  next: CatalogSnapshot,
) => void;

/**
 * An upstream announced list changes (its list_changed `methods`) and the pull they caused was
 * applied: the catalog before that pull and now (undefined while there is none).
 */
export type UpstreamAnnouncedListener = (
  upstreamId: string,
  methods: readonly string[],
  before: CatalogSnapshot | undefined,
  after: CatalogSnapshot | undefined,
) => void;

/** One intake with its round, in a publication. */
interface IntakeRound {
  readonly intake: SourceIntake<SourceRound>;
  readonly round: SourceRound;
}

/** A merge rejection: the error type, its detail, the sources that took part. */
interface Rejection {
  readonly errorType: MergeRejectionType;
  readonly detail: string;
  readonly bundleIds: readonly string[];
}

/**
 * Publishes the catalog (contract §7, §11; docs/architecture.md "The house"): every round, the
 * intakes of the two kinds of source (BundleIntake for Tool Service bundles, UpstreamIntake for
 * upstream MCP servers) check what was pulled; this service merges their copies, publishes the
 * catalog when the aggregate passes, and tells each intake which copies it adopted. Discovery hands
 * it each round's pull results; McpModule reads `current()`. The catalog reference is swapped
 * whole, so readers never see a half-built one.
 */
@Injectable()
export class RegistryService {
  private readonly logger = new Logger('Registry');
  private readonly bundles: BundleIntake;
  /** Every kind of source, bundles first (docs/architecture.md "The house"). */
  private readonly intakes: readonly SourceIntake<SourceRound>[];
  private readonly outputValidators = new OutputValidators();
  private snapshot?: CatalogSnapshot;
  private firstRoundDone = false;
  private lastRejectionReason?: PullErrorType;
  /**
   * The last catalog changes of this replica (the console's Catalog history,
   * docs/console.md "Catalog history").
   */
  private readonly changes = new CatalogHistory();
  private readonly publishedListeners = new Set<CatalogPublishedListener>();
  private readonly roundListeners = new Set<() => void>();
  private readonly announcedListeners = new Set<UpstreamAnnouncedListener>();
  /** Per source, the content fingerprint of its copy the last merge rejected (cleared on adoption). */
  private readonly rejectedCopies = new Map<string, string>();
  /**
   * The publication in progress, if any: rounds, single-upstream refreshes and warm-start
   * adoptions are applied one after another, never interleaved (each merges the copies the
   * one before it committed).
   */
  private applying: Promise<void> = Promise.resolve();

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly clock: Clock,
    @Optional() @Inject(LAST_GOOD_STORE) private readonly store: LastGoodStore | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional()
    @Inject(UpstreamIntake)
    private readonly upstreams: UpstreamIntake = new UpstreamIntake(config, metrics, store),
    @Optional()
    @Inject(PinnedTools)
    private readonly pinned: PinnedTools = new PinnedTools(null, metrics),
  ) {
    this.bundles = new BundleIntake(config, clock, store, metrics, (tool) =>
      this.outputValidators.validatorFor(tool),
    );
    this.intakes = [this.bundles, this.upstreams];
    // an approval (here or on another replica) publishes the held tools it approves
    this.pinned.onChanged(() => this.republish());
    store?.onReconnected?.(() => {
      let written = 0;
      for (const intake of this.intakes) written += intake.writeBack();
      if (written > 0)
        this.logger.log(
          `Redis connected again: ${written} last good cop${written === 1 ? 'y' : 'ies'} written back (a failover may have lost recent writes)`,
        );
    });
    metrics?.readSourceStatusesFrom(() =>
      this.intakes.flatMap((intake) =>
        intake.statuses().map(({ id, status }) => ({ kind: intake.kind, source: id, status })),
      ),
    );
  }

  /** The published catalog, or undefined while none can be published (contract §1: all or nothing). */
  current(): CatalogSnapshot | undefined {
    return this.snapshot;
  }

  /**
   * Calls `listener(previous, next)` each time a new catalog is swapped in (after the swap, in
   * the refresh round's turn; the notification streams push list changes from it,
   * docs/operations.md §11 "Notification streams"). A listener that throws is logged and ignored.
   * Returns the unsubscribe function.
   */
  /**
   * Calls `listener` each time an upstream's list_changed was followed by its pull, applied:
   * for whoever relays the announcement to clients when the catalog did not change, so that
   * nothing a client can list differs but the upstream still said so (docs/operations.md §11
   * "Notification streams").
   */
  onUpstreamAnnounced(listener: UpstreamAnnouncedListener): () => void {
    this.announcedListeners.add(listener);
    return () => {
      this.announcedListeners.delete(listener);
    };
  }

  /** The pull an upstream's list_changed `methods` caused was applied (see onUpstreamAnnounced). */
  upstreamAnnounced(
    upstreamId: string,
    methods: readonly string[],
    before: CatalogSnapshot | undefined,
  ): void {
    const after = this.current();
    for (const listener of this.announcedListeners) {
      try {
        listener(upstreamId, methods, before, after);
      } catch {
        // one listener's failure must not keep the others from running
      }
    }
  }

  onPublished(listener: CatalogPublishedListener): () => void {
    this.publishedListeners.add(listener);
    return () => {
      this.publishedListeners.delete(listener);
    };
  }

  /**
   * Calls `listener` after every refresh round that had a source, whether it published or
   * not, after a warm start adopted stored copies, and right after an upstream is put or
   * removed at runtime (so after every publication too): for whoever keeps something per
   * enabled upstream (the listen streams' upstream listens,
   * docs/operations.md §11 "Notification streams") and must follow changes that leave the published
   * catalog as it was (a DELETE and a POST of one id within one round). A listener must not throw
   * (a throw is logged and ignored). Returns the function that removes it.
   */
  onRoundApplied(listener: () => void): () => void {
    this.roundListeners.add(listener);
    return () => {
      this.roundListeners.delete(listener);
    };
  }

  private roundApplied(): void {
    for (const listener of this.roundListeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error(
          `A round listener failed (${err instanceof Error ? err.name : typeof err}); ignored`,
        );
      }
    }
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
    return this.bundles.enabled();
  }

  /** The upstream MCP servers to pull: enabled ones, in config order. */
  enabledUpstreams(): ReturnType<UpstreamIntake['enabled']> {
    return this.upstreams.enabled();
  }

  /**
   * Adds or replaces an upstream registered at runtime
   * (docs/operations.md §15 "Shared and durable"); it is pulled from the next round on and joins
   * the catalog only through that round's merge. false for the id of a configured upstream.
   * `registeredAt` (ms since the epoch, the registration's createdAt) places it among the
   * registered sources, after every configured one (the order in which sources claim resource
   * URIs); default: when it was first put here.
   */
  putUpstream(definition: UpstreamDefinition, registeredAt?: number): boolean {
    const put = this.upstreams.put(definition, registeredAt);
    // a replaced upstream starts afresh, its rejected copy included
    if (put) {
      this.rejectedCopies.delete(definition.id);
      this.metrics?.rememberUpstream(definition.id);
      this.roundApplied();
    }
    return put;
  }

  /** Forgets a registered upstream; the next round publishes the catalog without it. */
  removeUpstream(id: string): boolean {
    this.rejectedCopies.delete(id);
    const removed = this.upstreams.remove(id);
    if (removed) {
      this.roundApplied();
      // its metric series leave the scrape with it (docs/operations.md §3)
      void this.metrics?.forgetUpstream(id);
    }
    return removed;
  }

  /**
   * The caller headers some enabled upstream forwards (its `forwardHeaders`, lower-cased): the
   * same set until an upstream is put or removed (UpstreamIntake.forwardedHeaders).
   */
  forwardedHeaders(): ReadonlySet<string> {
    return this.upstreams.forwardedHeaders();
  }

  /** One upstream's pull state (status, last error with its detail, era, tool count). */
  upstreamState(id: string): UpstreamPullState | undefined {
    return this.upstreams.stateOf(id);
  }

  /** true until this bundle's first pull attempt has been applied (fallback files are read only then). */
  isFirstAttempt(bundleId: string): boolean {
    return this.bundles.records.get(bundleId)?.lastAttemptAt === undefined;
  }

  /** true when the bundle has no last-good copy at all (a fallback file may be adopted). */
  hasNoCopy(bundleId: string): boolean {
    return this.bundles.records.get(bundleId)?.lastGood === undefined;
  }

  view(): ToolBundlesView {
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
      bundles: reviewed(
        this.bundles.views(this.clock.now()),
        (id) => this.bundles.records.get(id)?.definition.pinned === true,
        this.pinned.reviews(),
      ),
    };
  }

  /**
   * The tool of a pinned source this published name belongs to while it is held for review
   * (docs/operations.md §6 "Pinned tool definitions"): in no catalog, and no reason to refresh.
   */
  heldForReview(name: string): { readonly name: string; readonly sourceId: string } | undefined {
    return this.pinned.held(name);
  }

  /** The last publications and rejections, newest first (GET /actuator/catalog/history). */
  history(): CatalogHistoryView {
    return this.changes.view();
  }

  upstreamsView(): UpstreamsView {
    return {
      identity: this.config.mcp.identity,
      ready: this.isReady(),
      upstreams: reviewed(
        this.upstreams.views(this.clock.now()),
        (id) => this.upstreams.stateOf(id)?.definition.pinned === true,
        this.pinned.reviews(),
      ),
    };
  }

  /**
   * Enabled sources the catalog serves incompletely (docs/operations.md §10 "Partial lists"):
   * bundles and upstreams served from a last good copy after a failed pull, and upstreams never
   * answered.
   */
  /** The namePrefix of a bundle or upstream (its published tool names start with it); undefined when unknown. */
  namePrefixOf(id: string): string | undefined {
    for (const intake of this.intakes) {
      const prefix = intake.namePrefixOf(id);
      if (prefix !== undefined) return prefix;
    }
    return undefined;
  }

  partialSources(): PartialSource[] {
    return this.intakes.flatMap((intake) => intake.partialSources());
  }

  /**
   * Runs once before the first pull (contract §11 "Redis warm start 후 즉시 preload"): adopts the
   * shared last-good copies, if a store is configured. Never throws.
   */
  async warmStart(): Promise<void> {
    // approvals first: a pinned tool approved before this start is not held at the first catalog
    await this.pinned.start();
    await this.adoptFromStore();
  }

  /** The shared store's copies of the sources that have none here, published when they complete the catalog. */
  private async adoptFromStore(): Promise<void> {
    if (this.store === null) return;
    const taken: IntakeRound[] = [];
    for (const intake of this.intakes) taken.push({ intake, round: await intake.storedRound() });
    await this.publishStored(taken);
  }

  /**
   * Adopts copies kept elsewhere (Redis last-good) for bundles that have nothing newer in
   * memory, then publishes a catalog if every enabled bundle now has a copy. A stored copy
   * never replaces a copy this replica already holds.
   */
  async adoptStoredCopies(copies: ReadonlyMap<string, StoredCopy>): Promise<void> {
    await this.publishStored(this.rounds(this.bundles.storedCopiesRound(copies)));
  }

  /** Publishes stored copies (a warm start's), unless no intake has one to adopt. */
  private async publishStored(taken: readonly IntakeRound[]): Promise<void> {
    if (taken.every(({ round }) => round.candidateIds().length === 0)) return;
    await this.serialized(async () => {
      try {
        await this.publish(taken);
      } finally {
        this.roundApplied();
      }
    });
  }

  /**
   * Applies one refresh round: each intake checks its kind's pulled results (contract §5, §7.1;
   * docs/operations.md §10 "Checks") and keeps the last good copy of every source that failed
   * (§6); the merged catalog is published when every enabled bundle has a copy and the aggregate
   * passes §7.3/§7.6; otherwise the previous catalog stays. An upstream that never answered does
   * not block the catalog.
   */
  async applyPulls(pulls: readonly SourcePulls[]): Promise<void> {
    await this.serialized(async () => {
      const taken: IntakeRound[] = [];
      for (const intake of this.intakes)
        taken.push({ intake, round: await intake.intakePulls(pulls) });
      try {
        await this.publish(taken);
      } finally {
        // The first attempt is over even if publishing failed unexpectedly (readiness, §6).
        this.firstRoundDone = true;
        this.roundApplied();
      }
    });
    // contract §6: readiness stays DOWN only while neither memory nor Redis holds a good copy.
    // A replica whose own pulls of a bundle keep failing takes the copy another replica wrote
    // since this one started (the warm start read the store only once), never over its own.
    if (this.current() === undefined) await this.adoptFromStore();
  }

  /** A round of bundle and upstream results (applyPulls with one list of each kind). */
  applyRound(
    results: readonly BundlePullResult[],
    upstreamResults: readonly UpstreamPullResult[] = [],
  ): Promise<void> {
    return this.applyPulls([
      { kind: 'bundle', results },
      { kind: 'upstream', results: upstreamResults },
    ]);
  }

  /**
   * Applies the pull of one upstream outside a round (its list_changed, docs/operations.md
   * §10): checked like a round's, merged with every other source's copy as it stands, and
   * published when the aggregate passes. No bundle is pulled or re-checked, and it does not
   * count as the first round (readiness waits for a round of every source). A pull that
   * started before the copy the upstream holds was pulled is stale and ignored.
   */
  async applyUpstreamPull(result: UpstreamPullResult): Promise<void> {
    await this.serialized(async () => {
      const upstreamRound = await this.upstreams.intake([result]);
      try {
        await this.publish(this.rounds(undefined, upstreamRound));
      } finally {
        this.roundApplied();
      }
    });
  }

  /**
   * Publishes the catalog again from the copies held now (after an approval of pinned tools,
   * docs/operations.md §6): nothing is pulled, and it does not count as a round.
   */
  private republish(): Promise<void> {
    return this.serialized(async () => {
      await this.publish(this.rounds());
    });
  }

  /** Runs `apply` after the publication in progress; its failure is its caller's, not the next one's. */
  private serialized(apply: () => Promise<void>): Promise<void> {
    const run = this.applying.then(apply);
    this.applying = run.catch(() => undefined);
    return run;
  }

  /** Every intake with its round (an empty one where none is given), in the order of `intakes`. */
  private rounds(
    bundleRound: BundleRound = this.bundles.emptyRound(),
    upstreamRound: UpstreamRound = this.upstreams.emptyRound(),
  ): IntakeRound[] {
    return [
      { intake: this.bundles, round: bundleRound },
      { intake: this.upstreams, round: upstreamRound },
    ];
  }

  /** Merges, and commits candidates only as far as the aggregate allows (contract §7.3, §7.6). */
  private async publish(taken: readonly IntakeRound[]): Promise<void> {
    const rounds = taken.map((t) => t.round);
    // every source's contribution; undefined while a kind holds the catalog back
    const contributions = (): SourceContribution[] | undefined => {
      const all: SourceContribution[] = [];
      for (const { intake, round } of taken) {
        const own = intake.contributions(round);
        if (own === undefined) return undefined;
        all.push(...own);
      }
      return all;
    };

    let current = contributions();
    let outcome: true | Rejection | undefined;
    let rejections = 0;
    while (current !== undefined) {
      outcome = await this.tryPublish(current);
      if (outcome === true) break;
      rejections += 1;
      const blamed = this.blame(outcome, rounds);
      this.lastRejectionReason = outcome.errorType;
      this.changes.recordRejected(
        this.clock.now(),
        outcome.errorType,
        outcome.detail,
        outcome.bundleIds,
      );
      this.metrics?.catalogRejected(outcome.errorType);
      this.logger.error(
        `Catalog not published (${outcome.errorType}): ${outcome.detail}; the previous catalog stays. ` +
          `Copies not adopted: ${blamed.join(', ') || 'none'}`,
      );
      if (blamed.length === 0) break;
      for (const id of blamed) {
        const fingerprint = candidateFingerprint(id, rounds);
        if (fingerprint !== undefined) this.rejectedCopies.set(id, fingerprint);
        for (const round of rounds) round.reject(id, outcome.errorType, outcome.detail);
      }
      // Each retry runs without the copies blamed so far: the others' changes may still be
      // published; the rejection reason stays visible until a round merges cleanly.
      current = contributions();
    }
    if (outcome === true) {
      if (rejections === 0) this.lastRejectionReason = undefined;
    } else if (outcome !== undefined) {
      // Nothing could be published: a changed copy that is not in the catalog is not adopted.
      for (const id of rounds.flatMap((round) => round.candidateIds()))
        if (isChanged(id, rounds)) for (const round of rounds) round.reject(id, outcome.errorType);
    }
    for (const id of rounds.flatMap((round) => round.candidateIds()))
      this.rejectedCopies.delete(id);
    for (const { intake, round } of taken) intake.commit(round);
  }

  /**
   * The sources whose copies a rejected merge does not adopt (contract §7.3, §7.6), in order
   * of suspicion among this round's candidates named by the rejection:
   * 1. copies rejected before with the same content (a registration whose tools never fit
   *    must not take an innocent newcomer down with it);
   * 2. copies that differ from their source's last good copy;
   * 3. every candidate the rejection names.
   * Empty when the rejection names no candidate (the last good copies alone conflict).
   */
  private blame(outcome: Rejection, rounds: readonly SourceRound[]): string[] {
    const involved = outcome.bundleIds.filter((id) =>
      rounds.some((round) => round.hasCandidate(id)),
    );
    const repeated = involved.filter((id) => {
      const rejected = this.rejectedCopies.get(id);
      return rejected !== undefined && rejected === candidateFingerprint(id, rounds);
    });
    if (repeated.length > 0) return repeated;
    const changed = involved.filter((id) => isChanged(id, rounds));
    return changed.length > 0 ? changed : involved;
  }

  /**
   * Logs the resource conflicts this catalog has that the published one had not (each is
   * logged once, not at every publication), at most LOGGED_NAMES lines and one for the rest.
   */
  private logNewConflicts(conflicts: readonly ResourceConflict[]): void {
    const key = (c: ResourceConflict): string => `${c.uri}\u0000${c.keptBy}\u0000${c.droppedFrom}`;
    const known = new Set((this.snapshot?.extras.conflicts ?? []).map(key));
    const fresh = conflicts.filter((c) => !known.has(key(c)));
    for (const c of fresh.slice(0, LOGGED_NAMES))
      this.logger.warn(
        c.template === undefined
          ? `Resource ${c.uri.slice(0, 128)} is listed by ${c.keptBy} and ${c.droppedFrom}; ` +
              `${c.keptBy} (the earlier source) keeps it, ${c.droppedFrom}'s entry is not published`
          : `Resource ${c.uri.slice(0, 128)} listed by ${c.droppedFrom} is covered by the template ` +
              `${c.template.slice(0, 128)} of ${c.keptBy}; ${c.keptBy} (the earlier source) keeps it, ` +
              `${c.droppedFrom}'s entry is not published`,
      );
    if (fresh.length > LOGGED_NAMES)
      this.logger.warn(`… and ${fresh.length - LOGGED_NAMES} more resource conflicts`);
  }

  /** Builds and swaps in the catalog for these inputs; true, or the merge rejection. */
  private async tryPublish(
    contributions: readonly SourceContribution[],
  ): Promise<true | Rejection> {
    const contentKey = [
      ...contributions.map((c) => `${c.id}:${c.fingerprint}`),
      // an approval of pinned tools changes what is served from the same copies
      `pins:${this.pinned.version}`,
    ].join('|');
    if (this.snapshot?.contentKey === contentKey) return true;
    const merged = await mergeCatalog(contributions, {
      maxToolsTotal: this.config.mcp.discovery.maxToolsTotal,
      maxToolTimeoutMillis: this.config.mcp.discovery.maxToolTimeoutMillis,
    });
    if (!merged.ok) return merged;
    // Validators of tools no longer published are dropped; unchanged ones were reused.
    this.outputValidators.retainUsed();
    // the sources with revisions (bundles' manifests), by id
    const revised = contributions.filter((c) => c.revision !== undefined);
    const revisions = Object.fromEntries(revised.map((c) => [c.id, c.revision ?? null]));
    const extras = CatalogExtras.build(
      contributions.flatMap((c) => (c.upstream === undefined ? [] : [c.upstream])),
      contributions.some((c) => c.kind === 'bundle'),
    );
    this.logNewConflicts(extras.conflicts);
    this.upstreams.noteResourceConflicts(extras.conflicts);
    // an upstream tool whose MCP Apps view another source serves is not published
    const views = withOwnViews(merged.tools, extras);
    for (const c of this.upstreams.noteViewConflicts(views.conflicts).slice(0, LOGGED_NAMES))
      this.logger.warn(
        `Tool ${c.tool.slice(0, 128)} of ${c.upstreamId} is not published: its MCP Apps view ` +
          `${c.resourceUri.slice(0, 128)} is served by ${c.servedBy}, not by ${c.upstreamId}`,
      );
    // tools of pinned sources are served only as approved (docs/operations.md §6)
    const screened = this.pinned.screen(views.tools, this.clock.now().getTime());
    const next = await CatalogSnapshot.build(
      screened.tools,
      contentKey,
      this.clock.now(),
      revisions,
      extras,
    );
    const previous = this.snapshot;
    this.snapshot = next;
    this.pinned.commit(screened);
    for (const listener of this.publishedListeners) {
      try {
        listener(previous, next);
      } catch (err) {
        this.logger.error(
          `A catalog listener failed (${err instanceof Error ? err.name : typeof err}); ignored`,
        );
      }
    }
    this.metrics?.catalogPublished(next.toolCount);
    const diff = await diffCatalogs(previous, next);
    this.metrics?.forgetTools(diff.removed);
    const revisionChanges = Object.fromEntries(
      revised.map((c) => [
        c.id,
        { from: previous?.revisions[c.id] ?? null, to: c.revision ?? null },
      ]),
    );
    this.changes.recordPublished(next.publishedAt, next.toolCount, diff, revisionChanges);
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

/** The content fingerprint of a source's candidate copy in this publication; undefined when none. */
function candidateFingerprint(id: string, rounds: readonly SourceRound[]): string | undefined {
  for (const round of rounds) {
    const fingerprint = round.candidateFingerprint(id);
    if (fingerprint !== undefined) return fingerprint;
  }
  return undefined;
}

/** true when a source's candidate differs in content from the copy it serves now. */
function isChanged(id: string, rounds: readonly SourceRound[]): boolean {
  const round = rounds.find((r) => r.hasCandidate(id));
  return round !== undefined && round.isChanged(id);
}
