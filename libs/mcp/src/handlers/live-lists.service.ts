import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { JsonRpcCode } from '@app/wire';
import { GATEWAY_CONFIG, type GatewayConfig, type UpstreamDefinition } from '@app/config';
import { LiveListFetcher, type IncomingHeaders } from '@app/execution';
import { allowsSource, allowsTool, type CallerAccess, type CallerIdentity } from '@app/identity';
import { GatewayMetrics, ThrottledLines } from '@app/observability';
import {
  leftOutLogLines,
  LiveListMerger,
  ownsItsViews,
  RegistryService,
  type CatalogPrompt,
  type CatalogSnapshot,
  type LiveListKey,
  type PartialSource,
  type UpstreamContribution,
  type UpstreamTool,
} from '@app/registry';
import { upstreamRequestHeaders } from '@app/upstream';
import { ForwardedError } from '../errors/gateway-error';
import { LiveListCache, type CachedLiveList } from './live-list-cache';
import { LiveListResult } from './live-list-result';
import { markFilteredForCaller } from './caller-filtered';
import type { MethodContext } from '../methods/method-handler';
import { hearsOfSource, partialSourcesMember } from './partial-sources';
import {
  appOnlyNamesAmong,
  appOnlyToolNames,
  keepsFromAppTools,
} from '../servers/client-extensions';

/**
 * The list methods, the capability that offers each, and the result member
 * (docs/operations.md §10 "Lists").
 */
const LISTS: Readonly<Record<string, { readonly capability: string; readonly key: LiveListKey }>> =
  {
    'tools/list': { capability: 'tools', key: 'tools' },
    'prompts/list': { capability: 'prompts', key: 'prompts' },
    'resources/list': { capability: 'resources', key: 'resources' },
    'resources/templates/list': { capability: 'resources', key: 'resourceTemplates' },
  };

/** One live upstream's part in one request's list. */
type LiveAnswer =
  | ({ readonly kind: 'ok' } & CachedLiveList)
  | { readonly kind: 'not-offered' }
  | { readonly kind: 'failed'; readonly reason: string };

/** The caller's side of a live fetch. */
interface LiveCaller {
  readonly headers: IncomingHeaders;
  readonly caller?: CallerIdentity;
  /** What the caller may use; undefined or `all`: everything. */
  readonly access?: CallerAccess;
}

/**
 * Live fan-out (docs/operations.md §11 "Live lists"): the lists of `lists: live` upstreams fetched
 * per request, for the caller, all at once (never one after another), each bounded by its
 * `listMillis`, and merged with the catalog's sources by the registry's rules (LiveListMerger). A
 * live upstream that fails, misses its deadline or collides is skipped, logged with its id, counted
 * (`mcp_gateway_upstream_live_failures_total{upstream,method}`) and named in the result's
 * partial-sources `_meta` as `missing`; when every source of the list failed, the answer is
 * JSON-RPC error -32603, never an empty list. Answers are reused per caller scope for their
 * ttlMs (LiveListCache). Tools of a live upstream route by its prefix (`toolFor`).
 * A restricted caller's request reaches only the live upstreams it may use (`fetchesFor`):
 * its Authorization, forwardHeaders and exchanged token never go to a source outside its
 * grant; such a source still claims URIs through its catalog copy, pulled with the
 * gateway's own credentials (docs/operations.md §11 "Live lists", docs/security.md).
 */
@Injectable()
export class LiveLists {
  private readonly logger = new Logger('Mcp');
  /**
   * A live list is fetched per caller request, so what one fetch logs a caller could have
   * logged per request: counted per upstream and list instead, the first at once, then at most
   * once a minute (docs/operations.md §4 "What outsiders can make the gateway log").
   */
  private readonly lines = new ThrottledLines((line) => this.logger.warn(line));
  private readonly live: readonly UpstreamDefinition[];
  private readonly liveIds: ReadonlySet<string>;
  private readonly configOrder: readonly string[];
  /** Longest prefix first: the owner of a name is the live upstream with the longest prefix of it. */
  private readonly byPrefix: readonly UpstreamDefinition[];
  private readonly merger = new LiveListMerger();
  private readonly cache = new LiveListCache();

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly fetcher: LiveListFetcher,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.live = config.upstreams.filter((u) => u.enabled && u.lists === 'live');
    this.liveIds = new Set(this.live.map((u) => u.id));
    this.configOrder = config.upstreams.map((u) => u.id);
    this.byPrefix = [...this.live].sort((a, b) => b.namePrefix.length - a.namePrefix.length);
  }

  /** true when an enabled upstream is configured `lists: live`: lists are then built per request. */
  get active(): boolean {
    return this.live.length > 0;
  }

  /**
   * The list `method` (tools/list, prompts/list, resources/list, resources/templates/list) with
   * every live upstream's answer for this caller merged into the catalog's.
   * @throws ForwardedError -32603 when every source of the list failed
   */
  async list(
    method: string,
    catalog: CatalogSnapshot,
    context: MethodContext,
  ): Promise<LiveListResult> {
    const spec = LISTS[method];
    if (spec === undefined) throw new TypeError(`not a list method: ${method}`);
    const answers = await Promise.all(
      this.live
        .filter((u) => this.fetchesFor(u, spec.key, context.access))
        .map(async (u) => [u, await this.answer(u, method, context)] as const),
    );
    const contributions: UpstreamContribution[] = [];
    const failed: string[] = [];
    let asked = 0;
    let ttlMs = Number.POSITIVE_INFINITY;
    let cacheScope: 'public' | 'private' = 'public';
    for (const [upstream, answer] of answers) {
      if (answer.kind === 'not-offered') continue;
      asked++;
      if (answer.kind === 'failed') {
        this.skip(upstream.id, method, answer.reason);
        failed.push(upstream.id);
        continue;
      }
      contributions.push(answer.contribution);
      ttlMs = Math.min(ttlMs, answer.ttlMs);
      if (answer.cacheScope === 'private') cacheScope = 'private';
    }
    const access = context.access;
    const restricted = access !== undefined && !access.all;
    // app-only tools stay from a client without MCP Apps (docs/operations.md §10 "Extensions")
    const appOnly =
      spec.key === 'tools'
        ? new Set([
            ...appOnlyToolNames(catalog),
            ...appOnlyNamesAmong(contributions.flatMap((c) => c.tools)),
          ])
        : undefined;
    // a list with app-only tools depends on what the client declared: never shared either way
    const varies = appOnly !== undefined && appOnly.size > 0;
    const hidden = varies && keepsFromAppTools(context.clientCapabilities) ? appOnly : undefined;
    const hides = hidden !== undefined;
    const merged = await this.merger.merge(
      catalog,
      spec.key,
      contributions,
      this.configOrder,
      restricted || hides
        ? {
            tool: (sourceId, name) =>
              (!restricted || allowsTool(access, sourceId, name)) && hidden?.has(name) !== true,
            source: (sourceId) => !restricted || allowsSource(access, sourceId),
          }
        : undefined,
    );
    for (const { id, reason } of merged.skipped) {
      this.skip(id, method, reason);
      failed.push(id);
    }
    // in a tools list, single-tool grants count too (docs/operations.md §13 "Access")
    const prefixOf =
      spec.key === 'tools' ? (id: string) => this.registry.namePrefixOf(id) : undefined;
    const snapshotPartial = this.registry.partialSources().filter((p) => !this.liveIds.has(p.id));
    if (
      asked > 0 &&
      failed.length >= asked &&
      this.servingSnapshotSources(spec, catalog, snapshotPartial) === 0
    ) {
      // a restricted caller hears only of its own sources (as in partialSourcesMember)
      const named = restricted
        ? failed.filter((id) => hearsOfSource(access, id, prefixOf))
        : failed;
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `Every source of ${method} failed${named.length > 0 ? `: ${named.join(', ')}` : ''}`,
        { failedSources: named },
      );
    }
    const partial: PartialSource[] = [
      ...snapshotPartial,
      ...failed.map((id) => ({ id, kind: 'upstream' as const, state: 'missing' as const })),
    ];
    // No live upstream offers this list: its hints are the snapshot's alone.
    const hints =
      asked === 0
        ? undefined
        : {
            // A list missing a source must not be reused as if complete.
            ttlMs: failed.length > 0 || !Number.isFinite(ttlMs) ? 0 : ttlMs,
            cacheScope,
          };
    const result = new LiveListResult(
      [`{"${spec.key}":`, merged.json, partialSourcesMember(partial, access, prefixOf), '}'],
      hints,
    );
    // filtered for this caller: never shared (wire notes §3)
    return restricted || varies ? markFilteredForCaller(result) : result;
  }

  /** The live upstream whose prefix the published name starts with (the longest), if any. */
  ownerOf(name: string): UpstreamDefinition | undefined {
    return this.byPrefix.find(
      (u) => name.startsWith(u.namePrefix) && name.length > u.namePrefix.length,
    );
  }

  /**
   * The live tool a published name calls, for this caller: its owner by prefix, its original
   * name from the caller's live tools/list (the catalog's reversible mapping, never parsed
   * out of the name). When that list cannot be had, the name after the prefix: the upstream
   * then judges it, and likewise, unasked, when the caller may not use the tool (its grant
   * then refuses it). undefined when no live upstream's prefix starts the name, or its list
   * does not hold it.
   */
  async toolFor(name: string, context: LiveCaller): Promise<UpstreamTool | undefined> {
    const upstream = this.ownerOf(name);
    if (upstream === undefined) return undefined;
    // a tool the caller may not use: its owner is not asked (the caller's credentials stay
    // here); the tool below, under its owner, is then denied by the caller's grant exactly
    // like an unknown tool (docs/security.md, access rules)
    if (
      context.access === undefined ||
      context.access.all ||
      allowsTool(context.access, upstream.id, name)
    ) {
      const answer = await this.answer(upstream, 'tools/list', context);
      if (answer.kind === 'ok') {
        const tool = answer.contribution.tools.find((t) => t.name === name);
        // as in its list (LiveListMerger): a tool whose MCP Apps view another source serves is
        // not published, so it is unknown here too (docs/operations.md §10 "Extensions")
        const extras = this.registry.current()?.extras;
        if (tool === undefined || (extras !== undefined && !ownsItsViews(tool, extras)))
          return undefined;
        return tool as UpstreamTool;
      }
      if (answer.kind === 'not-offered') return undefined;
    }
    return {
      name,
      sourceId: upstream.id,
      route: { kind: 'upstream', upstream, originalName: name.slice(upstream.namePrefix.length) },
      timeoutMillis: upstream.callMillis,
      version: '',
      publishedJson: '',
      fingerprint: '',
    };
  }

  /**
   * The live prompt a published name gets, for this caller (docs/operations.md §11 "Live lists"):
   * its owner by prefix, its original name from the caller's live prompts/list. undefined when no
   * live upstream's prefix starts the name, or its list cannot be had or does not hold it.
   */
  async promptFor(name: string, context: LiveCaller): Promise<CatalogPrompt | undefined> {
    const upstream = this.ownerOf(name);
    if (upstream === undefined) return undefined;
    // the caller's credentials go only to a source it may use (see fetchesFor)
    if (!this.fetchesFor(upstream, 'prompts', context.access)) return undefined;
    const answer = await this.answer(upstream, 'prompts/list', context);
    return answer.kind === 'ok'
      ? answer.contribution.prompts.find((p) => p.name === name)
      : undefined;
  }

  /** One live upstream's answer for this caller: from the cache while fresh, else fetched. */
  private async answer(
    upstream: UpstreamDefinition,
    method: string,
    context: LiveCaller,
  ): Promise<LiveAnswer> {
    const spec = LISTS[method];
    if (spec === undefined) return { kind: 'not-offered' };
    const key = LiveListCache.key(
      upstream,
      method,
      context.caller?.token,
      upstreamRequestHeaders(upstream, context.headers),
    );
    const cached = this.cache.get(key);
    if (cached !== undefined) return { kind: 'ok', ...cached };
    const outcome = await this.fetcher.fetch(
      upstream,
      { method, ...spec },
      context.headers,
      context.caller,
    );
    if (outcome.kind !== 'items') return outcome;
    const contribution = await this.merger.accept(spec.key, {
      upstream,
      era: outcome.era,
      capabilities: outcome.capabilities,
      items: outcome.items,
    });
    const { leftOut } = contribution;
    if (leftOut.length > 0)
      this.lines.note(`${upstream.id}\u0000${method}\u0000left-out`, (count) =>
        count === 1
          ? leftOutLogLines(`Upstream ${upstream.id}: live `, leftOut)
          : `Upstream ${upstream.id}: live ${method}: ${count} fetches since the last line left entries out (the last ${leftOut.length}; a fetch's first entries are logged one by one once a minute at most)`,
      );
    const ttlMs = Math.min(outcome.ttlMs, this.config.mcp.cache.maxTtlMillis);
    const entry: CachedLiveList = { contribution, ttlMs, cacheScope: outcome.cacheScope };
    this.cache.set(key, entry, outcome.bytes);
    return { kind: 'ok', ...entry };
  }

  /**
   * Whether this caller's list request goes to a live upstream: always for an unrestricted
   * caller; for a restricted one, when the source is granted whole or (tools/list) one of
   * its single-tool grants is a name under the upstream's prefix (the tool may be in the
   * list). Anything else would send the caller's Authorization, forwardHeaders or exchanged
   * token to a source it may not use, to drop the answer afterwards.
   */
  private fetchesFor(
    upstream: UpstreamDefinition,
    key: LiveListKey,
    access: CallerAccess | undefined,
  ): boolean {
    if (access === undefined || access.all || allowsSource(access, upstream.id)) return true;
    return key === 'tools' && hearsOfSource(access, upstream.id, () => upstream.namePrefix);
  }

  private skip(id: string, method: string, reason: string): void {
    this.lines.note(`${id}\u0000${method}`, (count) =>
      count === 1
        ? `Upstream ${id}: live ${method} skipped (${reason})`
        : `Upstream ${id}: live ${method} skipped ${count} times since the last line (the last: ${reason})`,
    );
    this.metrics?.upstreamLiveFailure(id, method);
  }

  /** Snapshot sources of this list that serve something (bundles for tools, snapshot upstreams). */
  private servingSnapshotSources(
    spec: { readonly capability: string },
    catalog: CatalogSnapshot,
    partial: readonly PartialSource[],
  ): number {
    const missing = new Set(partial.filter((p) => p.state === 'missing').map((p) => p.id));
    const bundles =
      spec.capability === 'tools'
        ? this.config.bundles.filter((b) => b.enabled && !missing.has(b.id)).length
        : 0;
    const upstreams = catalog.extras
      .upstreamsWith(spec.capability)
      .filter((u) => !this.liveIds.has(u.id)).length;
    return bundles + upstreams;
  }
}
