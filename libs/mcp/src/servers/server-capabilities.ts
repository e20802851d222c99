import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { allowsSource, allowsTool, type CallerAccess } from '@app/identity';
import { RegistryService, type CatalogSnapshot } from '@app/registry';
import { keptFor } from './caller-lists';
import { mergedExtensions } from './client-extensions';

/**
 * The ServerCapabilities `initialize` advertises (docs/operations.md §10 "Capabilities"): `tools`,
 * `resources`, `prompts`, `completions` and `logging` only where at least one enabled source of the
 * published catalog can serve them (bundles serve tools; an upstream what its own
 * capabilities say). `listChanged` is true where the gateway pushes list changes
 * (docs/operations.md §11 "Notification streams"): on 2026 `subscriptions/listen` streams, and on
 * 2025 session GET streams, which exist only when sessions are sealed (a stateless 2025 gateway
 * passes false). Before any catalog is published, only `tools`. An enabled `lists: live` upstream
 * the catalog holds no capabilities of (not reached yet, or down) counts as serving tools: its
 * tools/list is fanned out per request, and when every source failed that list is a -32603 the
 * client must see, not an empty list an SDK client makes up for a server without `tools`
 * (docs/operations.md §11 "Live lists"). `extensions`: those the caller's granted upstreams
 * declared (docs/operations.md §10 "Extensions").
 */
@Injectable()
export class ServerCapabilities {
  private readonly hasBundles: boolean;
  /** Ids of the enabled `lists: live` upstreams (docs/operations.md §11 "Live lists"). */
  private readonly liveUpstreams: readonly string[];

  constructor(
    private readonly registry: RegistryService,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.hasBundles = config.bundles.some((b) => b.enabled);
    this.liveUpstreams = config.upstreams
      .filter((u) => u.enabled && u.lists === 'live')
      .map((u) => u.id);
  }

  /**
   * @param access the caller's grants (docs/operations.md §13 "Access"): a restricted caller is
   *   offered only what its granted sources serve (tools when it may see at least one tool).
   * @param listChanged whether this client can be told of list changes (see above)
   * @param modern a 2026-07-28 client's (server/discover): the extensions of that revision
   */
  current(access?: CallerAccess, listChanged = true, modern = false): Record<string, object> {
    const catalog = this.registry.current();
    if (catalog === undefined) return { tools: { listChanged } };
    const features =
      access === undefined || access.all
        ? catalog.extras.features
        : callerFeatures(catalog, access);
    const capabilities: Record<string, object> = {};
    if (
      features.tools ||
      ((access === undefined || access.all) && this.hasBundles) ||
      this.liveUpstreams.some(
        (id) =>
          !catalog.extras.upstreams.has(id) &&
          (access === undefined || access.all || allowsSource(access, id)),
      )
    )
      capabilities.tools = { listChanged };
    // a resource's updates are pushed as list changes are: a stateless 2025 gateway, which
    // refuses resources/subscribe (no session to hold it), offers neither
    if (features.resources)
      capabilities.resources = {
        listChanged,
        // a 2026 client subscribes by subscriptions/listen, honoured for 2026 upstreams only
        ...((modern ? features.resourcesSubscribeModern : features.resourcesSubscribe) &&
        listChanged
          ? { subscribe: true }
          : {}),
      };
    if (features.prompts) capabilities.prompts = { listChanged };
    if (features.completions) capabilities.completions = {};
    if (features.logging) capabilities.logging = {};
    // the upstreams' extensions, from the caller's granted sources (docs/operations.md §10 "Extensions")
    const extensions = mergedExtensions(catalog, access, modern);
    if (extensions !== undefined) capabilities.extensions = extensions;
    return capabilities;
  }
}

type Features = CatalogSnapshot['extras']['features'];
const callerFeatureCache = new WeakMap<CatalogSnapshot, Map<string, Features>>();

/** The features a restricted caller's granted sources serve, once per catalog and grant key. */
function callerFeatures(
  catalog: CatalogSnapshot,
  access: Extract<CallerAccess, { all: false }>,
): Features {
  // a grant narrowed to a view of another catalog: built, not kept (caller-lists.ts keptFor)
  if (!keptFor(catalog, access)) return featuresOf(catalog, access);
  let byKey = callerFeatureCache.get(catalog);
  if (byKey === undefined) {
    byKey = new Map();
    callerFeatureCache.set(catalog, byKey);
  }
  let features = byKey.get(access.key);
  if (features === undefined) {
    features = featuresOf(catalog, access);
    byKey.set(access.key, features);
  }
  return features;
}

function subscribable(c: { readonly capabilities: Record<string, unknown> }): boolean {
  return (c.capabilities.resources as { subscribe?: unknown } | undefined)?.subscribe === true;
}

/** What the caller's granted part of the catalog offers. */
function featuresOf(
  catalog: CatalogSnapshot,
  access: Extract<CallerAccess, { all: false }>,
): Features {
  const granted = [...catalog.extras.upstreams.values()].filter((c) =>
    allowsSource(access, c.upstream.id),
  );
  const has = (key: string): boolean => granted.some((c) => c.capabilities[key] !== undefined);
  const resources = granted.find((c) => c.capabilities.resources !== undefined);
  return {
    tools:
      catalog.tools.some((t) => allowsTool(access, t.sourceId, t.name)) ||
      grantsLiveTool(catalog, access),
    resources: resources !== undefined,
    resourcesSubscribe: granted.some(subscribable),
    resourcesSubscribeModern: granted.some((c) => c.era === '2026' && subscribable(c)),
    prompts: has('prompts'),
    completions: has('completions'),
    logging: has('logging'),
  };
}

/**
 * Whether a restricted caller may use a tool of a `lists: live` upstream
 * (docs/operations.md §11 "Live lists"), which no catalog lists: the upstream offers tools and is
 * granted whole, or a tool granted by published name starts with its prefix.
 */
function grantsLiveTool(
  catalog: CatalogSnapshot,
  access: Extract<CallerAccess, { all: false }>,
): boolean {
  return [...catalog.extras.upstreams.values()].some(
    ({ upstream, capabilities }) =>
      upstream.lists === 'live' &&
      capabilities.tools !== undefined &&
      (access.sources.has(upstream.id) ||
        [...access.tools].some(
          (name) =>
            name.startsWith(upstream.namePrefix) && name.length > upstream.namePrefix.length,
        )),
  );
}
