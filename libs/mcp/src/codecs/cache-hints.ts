import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { RefreshScheduler } from '@app/discovery';
import { RegistryService } from '@app/registry';

/** 2026-07-28 cache hints of a result (wire notes §3). */
export interface CacheHints {
  /** How long the client may reuse the result, in ms. */
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

/** The list each upstream capability feeds. */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
};

/**
 * Cache hints of `server/discover` and the list results (issue 11 §3): the minimum ttlMs over
 * the sources that contribute (a bundle: the time left until its next scheduled pull, since
 * its copy cannot change sooner; an upstream: 0, since it may change its lists at any time
 * and a 2025 upstream says nothing), capped by `cache.maxTtlMillis`; `private` when an
 * upstream contributes (its scope is unknown, and omitted means private), `public` when
 * only bundles do. A list without any source is `{ttlMs: 0, private}`.
 */
@Injectable()
export class CacheHintsService {
  private readonly maxTtlMs: number;
  private readonly intervalMs: number;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly scheduler: RefreshScheduler,
  ) {
    this.maxTtlMs = config.mcp.cache.maxTtlMillis;
    this.intervalMs = config.mcp.registry.refreshIntervalSeconds * 1000;
  }

  /**
   * The snapshot's hints merged with a list's live sources' (issue 11 §4): the minimum ttlMs,
   * `private` when either is.
   */
  withLive(method: string, live: CacheHints | undefined): CacheHints {
    if (live === undefined) return this.forList(method);
    const own = this.snapshotHints(method);
    // only live sources: their hints alone, capped like any
    if (own === undefined)
      return { ttlMs: Math.min(live.ttlMs, this.maxTtlMs), cacheScope: live.cacheScope };
    return {
      ttlMs: Math.min(own.ttlMs, live.ttlMs),
      cacheScope:
        own.cacheScope === 'private' || live.cacheScope === 'private' ? 'private' : 'public',
    };
  }

  /** Hints for a list method, or for `server/discover` (every source contributes). */
  forList(method: string): CacheHints {
    return this.snapshotHints(method) ?? { ttlMs: 0, cacheScope: 'private' };
  }

  /** The hints of the snapshot's sources of a list; undefined when none serves it. */
  private snapshotHints(method: string): CacheHints | undefined {
    const capability = CAPABILITY_OF[method];
    const bundles = (capability === undefined || capability === 'tools') && this.hasBundles();
    const extras = this.registry.current()?.extras;
    const upstreams =
      capability === undefined || extras === undefined
        ? this.registry.enabledUpstreams().length > 0
        : // a lists: live upstream's hints come with its own answers (LiveListResult)
          extras.upstreamsWith(capability).some((u) => u.lists !== 'live');
    if (!bundles && !upstreams) return undefined;
    let ttlMs = this.maxTtlMs;
    if (bundles) ttlMs = Math.min(ttlMs, this.scheduler.msUntilNextRefresh() ?? this.intervalMs);
    if (upstreams) ttlMs = 0;
    return { ttlMs, cacheScope: upstreams ? 'private' : 'public' };
  }

  private hasBundles(): boolean {
    return this.config.bundles.some((b) => b.enabled);
  }
}
