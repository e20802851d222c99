import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  GATEWAY_CONFIG,
  toolsCapPerUpstream,
  type GatewayConfig,
  type UpstreamDefinition,
  upstreamSource,
} from '@app/config';
import { GatewayMetrics, ThrottledLines } from '@app/observability';
import type { ResourceConflict } from '../catalog/catalog-extras';
import type { ViewConflict } from '../catalog/own-views';
import type { SourceContribution } from '../catalog/source-contribution';
import { SchemaChecker } from '../manifest/schema-checker';
import {
  LAST_GOOD_STORE,
  type LastGoodStore,
  type StoredUpstreamLists,
  sourceUrlDigest,
} from '../redis/last-good-store';
import { acceptUpstreamListsSliced } from './upstream-contribution';
import type {
  UpstreamListHints,
  UpstreamListKey,
  UpstreamLists,
  UpstreamPullErrorType,
  UpstreamPullResult,
} from './upstream-pull-result';
import {
  UpstreamRecord,
  type UpstreamCopy,
  type UpstreamStatus,
  type UpstreamStatusView,
} from './upstream-record';
import { leftOutLogLines } from './left-out-log';
import {
  MapRound,
  type MergeRejectionType,
  type PartialSource,
  type SourceIntake,
  type SourcePulls,
  resultsOf,
} from '../source-intake';

/** One round's upstream outcomes, before the catalog decides which copies it adopts. */
export class UpstreamRound extends MapRound<UpstreamCopy, UpstreamPullErrorType> {
  /**
   * @param servedFingerprint the content fingerprint of the copy an upstream serves now
   * @param noteRejection records why the merge refused an upstream's copy (its status shows it)
   */
  constructor(
    servedFingerprint: (id: string) => string | undefined,
    private readonly noteRejection: (id: string, detail: string) => void,
  ) {
    super(servedFingerprint);
  }

  protected fingerprintOf(copy: UpstreamCopy): string {
    return copy.contribution.fingerprint;
  }

  protected failureOf(
    id: string,
    errorType: MergeRejectionType,
    detail?: string,
  ): UpstreamPullErrorType {
    if (detail !== undefined) this.noteRejection(id, detail);
    return errorType;
  }
}

/** What the registration API shows of an upstream's pulls (docs/operations.md §15 "Routes"). */
export interface UpstreamPullState {
  readonly definition: UpstreamDefinition;
  readonly status: UpstreamStatus;
  /** false until a round has pulled it. */
  readonly attempted: boolean;
  readonly lastErrorType?: UpstreamPullErrorType;
  /** The failure's detail as logged (operators only; never sent to agents). */
  readonly lastErrorDetail?: string;
  /** The era of the copy served, `2025` or `2026`. */
  readonly era?: '2025' | '2026';
  /** Tools of the copy served. */
  readonly toolCount?: number;
}

/**
 * The intake of upstream MCP servers (docs/operations.md §10 "Lists";
 * docs/architecture.md "The house"): turns each pull's lists into a contribution (checked, names
 * published), keeps every upstream's last good copy and its status. Catalog publication (merge,
 * swap) is RegistryService's: it asks for the contributions of a round and reports back which it
 * adopted.
 */
@Injectable()
export class UpstreamIntake implements SourceIntake<UpstreamRound> {
  readonly kind = 'upstream';
  private readonly logger = new Logger('Registry');
  /**
   * An upstream's pulls come as often as it says its lists changed, and a caller's unknown tool
   * name is a round too: what a pull logs is counted per upstream (a failure per kind), the
   * first at once, then at most once a minute (docs/operations.md §4 "What outsiders can make
   * the gateway log").
   */
  private readonly pullLines = new ThrottledLines((line) => this.logger.warn(line));
  /**
   * Configured upstreams first (config order), then registered ones (docs/operations.md §15) in order of
   * registration time (then id), the same on every replica whatever order it learnt them in:
   * the order in which sources claim resource URIs (CatalogExtras).
   */
  private records: Map<string, UpstreamRecord>;
  /** Ids of the configured upstreams: never replaced or removed at runtime. */
  private readonly configured: ReadonlySet<string>;
  private readonly schemas = new SchemaChecker();
  private readonly toolsCap: ReturnType<typeof toolsCapPerUpstream>;
  private readonly listItemsCap: number;
  /** What forwardedHeaders() returns: replaced whole when an upstream is put or removed. */
  private forwarded: ReadonlySet<string> = new Set();

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional() @Inject(LAST_GOOD_STORE) private readonly store: LastGoodStore | null = null,
  ) {
    this.records = new Map(config.upstreams.map((u) => [u.id, new UpstreamRecord(u)]));
    this.configured = new Set(config.upstreams.map((u) => u.id));
    this.toolsCap = toolsCapPerUpstream(config.mcp.discovery);
    this.listItemsCap = config.mcp.discovery.maxListItemsPerUpstream;
    this.forwarded = this.forwardedNow();
  }

  /**
   * The caller headers an enabled upstream (configured or registered) copies to its requests,
   * lower-cased: each must reach /mcp at most once (docs/operations.md §2 "Request limits on
   * /mcp"). The same set until an upstream is put or removed, so a reader may keep what it
   * derives from it for as long as it gets the same set back.
   */
  forwardedHeaders(): ReadonlySet<string> {
    return this.forwarded;
  }

  private forwardedNow(): ReadonlySet<string> {
    return new Set(this.enabled().flatMap((u) => u.forwardHeaders.map((h) => h.toLowerCase())));
  }

  /**
   * Why a list is refused before any of its schemas is compiled: more tools, or more entries of
   * another list, than one upstream may list (the pull counted them before parsing; this holds
   * for stored copies and a cap lowered since). Undefined when it fits.
   */
  private overCap(
    lists: UpstreamLists,
  ): { errorType: UpstreamPullErrorType; detail: string } | undefined {
    const { limit, key } = this.toolsCap;
    if (lists.tools.length > limit)
      return {
        errorType: 'UpstreamTooManyToolsError',
        detail: `tools/list lists ${lists.tools.length} tools, more than mcp.discovery.${key} ${limit}`,
      };
    const cap = this.listItemsCap;
    for (const list of ['resources', 'resourceTemplates', 'prompts'] as const)
      if (lists[list].length > cap)
        return {
          errorType: 'UpstreamTooManyItemsError',
          detail: `${lists[list].length} ${list}, more than mcp.discovery.maxListItemsPerUpstream ${cap}`,
        };
    return undefined;
  }

  /**
   * A pull that failed or whose lists are refused: its line, counted per upstream and kind (the
   * first at once, then at most once a minute).
   */
  private pullFailed(record: UpstreamRecord, what: string, errorType: string): void {
    const { id } = record.definition;
    const line = `${what}; ${record.lastGood ? 'serving its last good lists' : 'nothing of it is served yet'}`;
    this.pullLines.note(`${id}\u0000${errorType}`, (count) =>
      count === 1
        ? `Upstream ${id}: ${line}`
        : `Upstream ${id}: ${count} pulls since the last line: ${line}`,
    );
  }

  /**
   * Adds an upstream registered at runtime, or replaces one
   * (docs/operations.md §15 "Shared and durable"): a replaced upstream starts afresh (no copy, no
   * status), so its next round decides its state. It reaches the catalog only through the next
   * round's merge. A configured upstream is never replaced: false.
   */
  put(definition: UpstreamDefinition, registeredAt?: number): boolean {
    if (this.configured.has(definition.id)) return false;
    const record = new UpstreamRecord(definition);
    // A pull of the definition it replaces may still be running: its result is not this one's.
    record.putAt = Date.now();
    record.registeredAt =
      registeredAt ?? this.records.get(definition.id)?.registeredAt ?? record.putAt;
    this.records.set(definition.id, record);
    const registered = [...this.records.values()]
      .filter((r) => !this.configured.has(r.definition.id))
      .sort(
        (a, b) =>
          a.registeredAt - b.registeredAt ||
          (a.definition.id < b.definition.id ? -1 : a.definition.id > b.definition.id ? 1 : 0),
      );
    this.records = new Map(
      [
        ...[...this.records.values()].filter((r) => this.configured.has(r.definition.id)),
        ...registered,
      ].map((r) => [r.definition.id, r]),
    );
    this.forwarded = this.forwardedNow();
    return true;
  }

  /**
   * Forgets a registered upstream (docs/operations.md §15 "Routes", DELETE); the next round's merge
   * drops its items.
   */
  remove(id: string): boolean {
    if (this.configured.has(id)) return false;
    const removed = this.records.delete(id);
    if (removed) this.forwarded = this.forwardedNow();
    return removed;
  }

  /** Each upstream's id and status (configured and registered), for the status gauge. */
  statuses(): { id: string; status: UpstreamStatus }[] {
    return [...this.records.values()].map((r) => ({ id: r.definition.id, status: r.status }));
  }

  /** The pull state of one upstream, for the registration API; undefined when unknown. */
  stateOf(id: string): UpstreamPullState | undefined {
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    return {
      definition: record.definition,
      status: record.status,
      attempted: record.lastAttemptAt !== undefined,
      lastErrorType: record.lastErrorType,
      lastErrorDetail: record.lastErrorDetail,
      era: record.lastGood?.contribution.era,
      toolCount: record.lastGood?.contribution.tools.length,
    };
  }

  /** A round in which no upstream was pulled (a publication of the copies held). */
  emptyRound(): UpstreamRound {
    return new UpstreamRound(
      (id) => this.records.get(id)?.lastGood?.contribution.fingerprint,
      // why the catalog refused this upstream's copy (a merge rejection's detail)
      (id, detail) => {
        const record = this.records.get(id);
        if (record !== undefined) record.lastErrorDetail = detail;
      },
    );
  }

  /**
   * The resource conflicts of the catalog just published (CatalogExtras): each upstream's
   * status shows the URIs it lists that an earlier source keeps, and which source.
   */
  noteResourceConflicts(conflicts: readonly ResourceConflict[]): void {
    const byUpstream = groupedBy(conflicts, (c) => c.droppedFrom);
    for (const [id, record] of this.records) record.resourceConflicts = byUpstream.get(id) ?? [];
  }

  /**
   * The view conflicts of the catalog just published (catalog/own-views.ts): each upstream's
   * status shows its tools left out for them. Returns those no status showed before (to be
   * logged once, not at every publication).
   */
  noteViewConflicts(conflicts: readonly ViewConflict[]): readonly ViewConflict[] {
    const key = (c: ViewConflict): string =>
      `${c.upstreamId}\u0000${c.tool}\u0000${c.resourceUri}\u0000${c.servedBy}`;
    const known = new Set([...this.records.values()].flatMap((r) => r.viewConflicts.map(key)));
    const byUpstream = groupedBy(conflicts, (c) => c.upstreamId);
    for (const [id, record] of this.records) record.viewConflicts = byUpstream.get(id) ?? [];
    return conflicts.filter((c) => !known.has(key(c)));
  }

  /** An upstream's namePrefix; undefined for an unknown id. */
  namePrefixOf(id: string): string | undefined {
    return this.records.get(id)?.definition.namePrefix;
  }

  /** The upstreams to pull: enabled ones, in config order. */
  enabled(): readonly UpstreamDefinition[] {
    return [...this.records.values()].map((r) => r.definition).filter((u) => u.enabled);
  }

  intakePulls(pulls: readonly SourcePulls[]): Promise<UpstreamRound> {
    return this.intake(resultsOf(pulls, this.kind));
  }

  /**
   * Checks a round's pull results (schemas compiled in time slices); nothing is adopted until
   * `commit`. Never throws.
   */
  async intake(results: readonly UpstreamPullResult[]): Promise<UpstreamRound> {
    const round = this.emptyRound();
    const { candidates, failures } = round;
    for (const result of results) {
      const record = this.records.get(result.upstreamId);
      if (!record?.definition.enabled) continue;
      if (result.attemptedAt.getTime() < record.putAt) continue;
      // A round's pull applied after a newer pull of the same upstream (its list_changed
      // refresh) must not bring back the older lists.
      if (record.lastAttemptAt !== undefined && result.attemptedAt < record.lastAttemptAt) continue;
      record.lastAttemptAt = result.attemptedAt;
      if (result.kind === 'failed') {
        failures.set(record.definition.id, result.errorType);
        record.lastErrorDetail = result.detail;
        this.pullFailed(
          record,
          `list pull failed (${result.errorType}: ${result.detail})`,
          result.errorType,
        );
        continue;
      }
      const overCap = this.overCap(result.lists);
      if (overCap !== undefined) {
        failures.set(record.definition.id, overCap.errorType);
        record.lastErrorDetail = overCap.detail;
        this.pullFailed(
          record,
          `lists refused (${overCap.errorType}: ${overCap.detail})`,
          overCap.errorType,
        );
        continue;
      }
      try {
        const contribution = await acceptUpstreamListsSliced(
          record.definition,
          result.lists,
          this.schemas,
        );
        const { id } = record.definition;
        const { leftOut } = contribution;
        if (leftOut.length > 0)
          this.pullLines.note(`${id}\u0000left-out`, (count) =>
            count === 1
              ? leftOutLogLines(`Upstream ${id}: `, leftOut)
              : `Upstream ${id}: ${count} pulls since the last line left entries out (the last ${leftOut.length}; a pull's first entries are logged one by one once a minute at most; GET /actuator/upstreams has them all)`,
          );
        candidates.set(record.definition.id, {
          contribution,
          lists: result.lists,
          source: 'remote',
          fetchedAt: result.attemptedAt,
        });
      } catch (err) {
        failures.set(record.definition.id, 'UnexpectedPullError');
        this.logger.error(
          `Upstream ${record.definition.id}: lists could not be checked (${err instanceof Error ? err.name : typeof err})`,
        );
      }
    }
    return round;
  }

  /**
   * Copies of the shared store (warm start) for upstreams that hold nothing yet, checked like a
   * pull; adopted when the catalog accepts them (`commit`). Never throws.
   */
  async storedRound(): Promise<UpstreamRound> {
    const round = this.emptyRound();
    const ids = this.enabled()
      .map((u) => u.id)
      .filter((id) => this.records.get(id)?.lastGood === undefined);
    const stored: ReadonlyMap<string, StoredUpstreamLists> =
      (await this.store?.loadUpstreams?.(ids)) ?? new Map<string, StoredUpstreamLists>();
    for (const [id, entry] of stored) {
      const record = this.records.get(id);
      const lists = asLists(entry.lists);
      if (record === undefined || lists === undefined || this.overCap(lists) !== undefined)
        continue;
      // lists pulled from another URL or registration are another source's: an earlier
      // registration under the same id (deleted, then posted again, at any URL; docs/operations.md
      // §15 "Deleted means gone"), or a configured URL since changed
      if (
        entry.urlDigest !== undefined &&
        entry.urlDigest !== sourceUrlDigest(upstreamSource(record.definition))
      ) {
        this.logger.log(
          `Upstream ${id}: the Redis copy was pulled from another URL or registration (an earlier registration or configuration); not used`,
        );
        continue;
      }
      try {
        const contribution = await acceptUpstreamListsSliced(
          record.definition,
          lists,
          this.schemas,
        );
        round.candidates.set(id, {
          contribution,
          lists,
          source: 'redis',
          fetchedAt: entry.fetchedAt,
        });
        this.logger.log(
          `Upstream ${id}: warm start from the Redis copy (pulled ${entry.fetchedAt.toISOString()} by ${entry.writtenBy})`,
        );
      } catch {
        // a stored copy that cannot be checked is a miss
      }
    }
    return round;
  }

  /**
   * What the catalog would serve of the upstreams with this round's candidates: the enabled ones
   * that have a copy, in config order. An upstream without a copy yet does not hold the catalog
   * back (docs/operations.md §10).
   */
  contributions(round: UpstreamRound): SourceContribution[] {
    const out: SourceContribution[] = [];
    for (const record of this.records.values()) {
      if (!record.definition.enabled) continue;
      const copy = round.candidates.get(record.definition.id) ?? record.lastGood;
      if (copy === undefined) continue;
      const contribution = copy.contribution;
      out.push({
        kind: 'upstream',
        id: contribution.upstream.id,
        fingerprint: contribution.fingerprint,
        upstream: contribution,
        entries: () => Promise.resolve(contribution.tools),
      });
    }
    return out;
  }

  /** Writes every last good list held here to the store again (each only if newer there). */
  writeBack(): number {
    let written = 0;
    for (const [id, record] of this.records) {
      const copy = record.lastGood;
      if (copy === undefined) continue;
      this.store?.saveUpstream?.(id, upstreamSource(record.definition), copy.lists, copy.fetchedAt);
      written += 1;
    }
    return written;
  }

  /** Adopts the candidates the catalog accepted and records every outcome of the round. */
  commit(round: UpstreamRound): void {
    for (const [id, copy] of round.candidates) {
      const record = this.records.get(id);
      if (record === undefined) continue;
      record.lastGood = copy;
      if (copy.source === 'redis') continue;
      // Shared with the other replicas and with this one's next start
      // (docs/operations.md §10 "Lists").
      this.store?.saveUpstream?.(id, upstreamSource(record.definition), copy.lists, copy.fetchedAt);
      const ended = record.recordSuccess(copy.fetchedAt);
      this.metrics?.upstreamPull(id, 'success');
      if (ended > 0)
        this.logger.log(
          `Upstream ${id}: recovered after ${ended} failed pull${ended === 1 ? '' : 's'}`,
        );
    }
    for (const [id, errorType] of round.failures) {
      this.records.get(id)?.recordFailure(errorType);
      this.metrics?.upstreamPull(id, errorType);
    }
  }

  /** true once every enabled upstream's first pull has been attempted. */
  allAttempted(): boolean {
    return [...this.records.values()].every(
      (r) => !r.definition.enabled || r.lastAttemptAt !== undefined,
    );
  }

  views(now: Date): UpstreamStatusView[] {
    return [...this.records.values()].map((r) =>
      r.view(now, this.configured.has(r.definition.id) ? 'config' : 'registered'),
    );
  }

  /**
   * Enabled upstreams served from a last good copy, or not at all
   * (docs/operations.md §10 "Partial lists").
   */
  partialSources(): PartialSource[] {
    const out: PartialSource[] = [];
    for (const record of this.records.values()) {
      const status = record.status;
      if (status === 'degraded')
        out.push({ id: record.definition.id, kind: 'upstream', state: 'last-good' });
      else if (status === 'unreachable')
        out.push({ id: record.definition.id, kind: 'upstream', state: 'missing' });
    }
    return out;
  }
}

function isList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value);
}

/**
 * Stored cache hints (docs/operations.md §11 "Cache hints"): only well-formed members are kept;
 * garbage means none.
 */
function asHints(value: unknown): UpstreamLists['hints'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: Partial<Record<UpstreamListKey, UpstreamListHints>> = {};
  for (const key of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) {
    const h = (value as Record<string, unknown>)[key];
    if (typeof h !== 'object' || h === null) continue;
    const { ttlMs, cacheScope } = h as Record<string, unknown>;
    out[key] = {
      ttlMs: typeof ttlMs === 'number' && Number.isInteger(ttlMs) && ttlMs >= 0 ? ttlMs : undefined,
      cacheScope: cacheScope === 'public' || cacheScope === 'private' ? cacheScope : undefined,
    };
  }
  return out;
}

/** Stored lists in the UpstreamLists shape, or undefined (garbage is a miss, never a catalog). */
function asLists(value: unknown): UpstreamLists | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.era !== '2025' && v.era !== '2026') return undefined;
  if (typeof v.capabilities !== 'object' || v.capabilities === null) return undefined;
  if (
    !isList(v.tools) ||
    !isList(v.resources) ||
    !isList(v.resourceTemplates) ||
    !isList(v.prompts)
  )
    return undefined;
  return {
    era: v.era,
    capabilities: v.capabilities as Record<string, unknown>,
    tools: v.tools,
    resources: v.resources,
    resourceTemplates: v.resourceTemplates,
    prompts: v.prompts,
    hints: asHints(v.hints),
  };
}

/** The items by the upstream each names, in their order. */
function groupedBy<T>(items: readonly T[], upstreamOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const id = upstreamOf(item);
    const list = out.get(id);
    if (list === undefined) out.set(id, [item]);
    else list.push(item);
  }
  return out;
}
