import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { RefreshScheduler } from '@app/discovery';
import type { CallerAccess } from '@app/identity';
import { RegistryService } from '@app/registry';

/** 2026-07-28 cache hints of a result (wire notes §3). */
export interface CacheHints {
  /** How long the client may reuse the result, in ms. */
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

/**
 * The hints of a list shown to one caller: a list filtered by the caller's grants (issue 12
 * §3) is `private`, whatever its sources, so no shared cache hands it to someone else.
 */
export function callerHints(hints: CacheHints, access: CallerAccess | undefined): CacheHints {
  return access === undefined || access.all || hints.cacheScope === 'private'
    ? hints
    : { ttlMs: hints.ttlMs, cacheScope: 'private' };
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

  /** Hints for a list method, or for `server/discover` (every source contributes). */
  forList(method: string): CacheHints {
    const capability = CAPABILITY_OF[method];
    const bundles = (capability === undefined || capability === 'tools') && this.hasBundles();
    const extras = this.registry.current()?.extras;
    const upstreams =
      capability === undefined || extras === undefined
        ? this.registry.enabledUpstreams().length > 0
        : extras.upstreamsWith(capability).length > 0;
    if (!bundles && !upstreams) return { ttlMs: 0, cacheScope: 'private' };
    let ttlMs = this.maxTtlMs;
    if (bundles) ttlMs = Math.min(ttlMs, this.scheduler.msUntilNextRefresh() ?? this.intervalMs);
    if (upstreams) ttlMs = 0;
    return { ttlMs, cacheScope: upstreams ? 'private' : 'public' };
  }

  private hasBundles(): boolean {
    return this.config.bundles.some((b) => b.enabled);
  }
}
