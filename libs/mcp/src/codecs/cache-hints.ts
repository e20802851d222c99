import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  CatalogRefresh,
  RegistryService,
  type UpstreamContribution,
  type UpstreamListKey,
} from '@app/registry';

/** 2026-07-28 cache hints of a result (wire notes §3). */
export interface CacheHints {
  /** How long the client may reuse the result, in ms. */
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

/** What a result's hints depend on besides its sources. */
export interface CacheHintsOptions {
  /**
   * The result was filtered for the caller (access rules, docs/operations.md §13 "Access"): it is
   * private.
   */
  readonly filteredForCaller?: boolean;
}

/** Per method: the upstream lists that feed it and the capability that offers them. */
const SOURCES: Readonly<
  Record<string, { readonly keys: readonly UpstreamListKey[]; readonly capability?: string }>
> = {
  'tools/list': { keys: ['tools'], capability: 'tools' },
  'prompts/list': { keys: ['prompts'], capability: 'prompts' },
  'resources/list': { keys: ['resources'], capability: 'resources' },
  'resources/templates/list': { keys: ['resourceTemplates'], capability: 'resources' },
  // server/discover: every source contributes (its capabilities come from all of them)
  'server/discover': { keys: ['tools', 'resources', 'resourceTemplates', 'prompts'] },
};

/**
 * Cache hints of `server/discover` and the list results (docs/operations.md §11 "Cache hints"; wire
 * notes §3 "most restrictive merge"): `ttlMs` is the minimum over the contributing sources, capped
 * by `cache.maxTtlMillis` — a bundle contributes the time left until its next scheduled pull (its
 * copy cannot change sooner); an upstream the `ttlMs` its own list result carried (the
 * smallest over its pages), or, when it sent none (every 2025 upstream), its configured
 * `cacheTtlMillis` (default 0). `cacheScope` is `private` when any contributor said private or
 * omitted the scope (unless its `cacheScope` is configured), or the result was filtered for
 * the caller; otherwise `public`. A result without any source is `{ttlMs: 0, private}`.
 */
@Injectable()
export class CacheHintsService {
  private readonly maxTtlMs: number;
  private readonly intervalMs: number;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly scheduler: CatalogRefresh,
  ) {
    this.maxTtlMs = config.mcp.cache.maxTtlMillis;
    this.intervalMs = config.mcp.registry.refreshIntervalSeconds * 1000;
  }

  /**
   * The snapshot's hints merged with a list's live sources' (docs/operations.md §11 "Live lists"):
   * the minimum ttlMs, `private` when either is (or when the result was filtered for the caller).
   */
  withLive(
    method: string,
    live: CacheHints | undefined,
    options: CacheHintsOptions = {},
  ): CacheHints {
    if (live === undefined) return this.forList(method, options);
    const own = this.snapshotHints(method, options);
    const livePrivate = live.cacheScope === 'private' || options.filteredForCaller === true;
    // only live sources: their hints alone, capped like any
    if (own === undefined)
      return {
        ttlMs: Math.max(0, Math.min(live.ttlMs, this.maxTtlMs)),
        cacheScope: livePrivate ? 'private' : 'public',
      };
    return {
      ttlMs: Math.max(0, Math.min(own.ttlMs, live.ttlMs)),
      cacheScope: own.cacheScope === 'private' || livePrivate ? 'private' : 'public',
    };
  }

  /** Hints for a list method, or for `server/discover` (every source contributes). */
  forList(method: string, options: CacheHintsOptions = {}): CacheHints {
    return this.snapshotHints(method, options) ?? { ttlMs: 0, cacheScope: 'private' };
  }

  /**
   * The hints of the snapshot's sources of a list; undefined when none serves it. A
   * `lists: live` upstream's list hints come with its own answers (LiveListResult).
   */
  private snapshotHints(method: string, options: CacheHintsOptions): CacheHints | undefined {
    const sources = SOURCES[method] ?? { keys: [] };
    const bundles = sources.keys.includes('tools') && this.hasBundles();
    const upstreams = [...(this.registry.current()?.extras.upstreams.values() ?? [])].filter(
      // server/discover: every upstream (a live one by its configured hints: it is asked anew)
      (c) =>
        sources.capability === undefined ||
        (c.upstream.lists !== 'live' && c.capabilities[sources.capability] !== undefined),
    );
    if (!bundles && upstreams.length === 0) return undefined;
    let ttlMs = this.maxTtlMs;
    let isPrivate = options.filteredForCaller === true;
    if (bundles) ttlMs = Math.min(ttlMs, this.scheduler.msUntilNextRefresh() ?? this.intervalMs);
    for (const contribution of upstreams) {
      const hints = upstreamHints(contribution, sources.keys);
      ttlMs = Math.min(ttlMs, hints.ttlMs);
      if (hints.cacheScope === 'private') isPrivate = true;
    }
    return { ttlMs: Math.max(0, ttlMs), cacheScope: isPrivate ? 'private' : 'public' };
  }

  /**
   * Hints for a `resources/read` result: the ones its upstream put on it (absent ttlMs: 0,
   * absent scope: private), capped by `cache.maxTtlMillis`; private when filtered for the caller.
   */
  forRead(result: Readonly<Record<string, unknown>>, options: CacheHintsOptions = {}): CacheHints {
    const ttl = result.ttlMs;
    const own = typeof ttl === 'number' && Number.isFinite(ttl) ? Math.floor(ttl) : 0;
    return {
      ttlMs: Math.max(0, Math.min(own, this.maxTtlMs)),
      cacheScope:
        result.cacheScope === 'public' && options.filteredForCaller !== true ? 'public' : 'private',
    };
  }

  private hasBundles(): boolean {
    return this.config.bundles.some((b) => b.enabled);
  }
}

/**
 * What one upstream contributes over the given lists: the hints its lists carried, a member
 * it omitted replaced by its configured `cacheTtlMillis` / `cacheScope` (defaults 0, private).
 */
export function upstreamHints(
  contribution: Pick<UpstreamContribution, 'hints' | 'upstream'>,
  keys: readonly UpstreamListKey[],
): CacheHints {
  const { upstream } = contribution;
  const present = keys.filter((k) => contribution.hints[k] !== undefined);
  const fallback: CacheHints = {
    ttlMs: upstream.cacheTtlMillis ?? 0,
    cacheScope: upstream.cacheScope ?? 'private',
  };
  if (present.length === 0) return fallback;
  let ttlMs = Number.MAX_SAFE_INTEGER;
  let isPrivate = false;
  for (const key of present) {
    const hint = contribution.hints[key];
    ttlMs = Math.min(ttlMs, hint?.ttlMs ?? fallback.ttlMs);
    if ((hint?.cacheScope ?? fallback.cacheScope) === 'private') isPrivate = true;
  }
  return { ttlMs, cacheScope: isPrivate ? 'private' : 'public' };
}
