import type { UpstreamDefinition } from '@app/config';
import type {
  CatalogPrompt,
  CatalogResource,
  UpstreamContribution,
} from '../upstream/upstream-contribution';
import { compareCodeUnits } from './merge-catalog';
import { TemplateIndex } from './template-index';

export { templateMatcher } from './template-index';

/**
 * A resource URI a source lists that an earlier source (config order, then registration
 * order) already claims, by listing it too or by a URI template that matches it: the earlier
 * one keeps it, the later one's entry is not published (docs/operations.md §10 "Routing").
 */
export interface ResourceConflict {
  readonly uri: string;
  readonly keptBy: string;
  readonly droppedFrom: string;
  /** The keeper's URI template that matches the URI; undefined when the keeper lists the URI. */
  readonly template?: string;
}

/** Which MCP features the catalog's sources can serve (docs/operations.md §10 "Capabilities"). */
export interface CatalogFeatures {
  readonly tools: boolean;
  readonly resources: boolean;
  readonly resourcesSubscribe: boolean;
  /**
   * A 2026-07-28 upstream offers resource subscriptions: what a 2026 client's
   * `subscriptions/listen` can honour (a 2025 upstream's are for 2025 sessions only,
   * docs/operations.md §11 "Notification streams").
   */
  readonly resourcesSubscribeModern: boolean;
  readonly prompts: boolean;
  readonly completions: boolean;
  readonly logging: boolean;
}

interface TemplateRoute {
  readonly uriTemplate: string;
  readonly upstream: UpstreamDefinition;
  /**
   * Its resources/templates/list entry (a caller's filtered list is built from these;
   * docs/operations.md §13 "Access").
   */
  readonly publishedJson: string;
  /** false: it routes and covers URIs but is not listed (a live upstream's catalog copy). */
  readonly listed: boolean;
}

/** A resource URI a source claims: listed, or only routed (a live upstream's catalog copy). */
interface ResourceClaim {
  readonly resource: CatalogResource;
  readonly listed: boolean;
}

const isLive = (c: UpstreamContribution): boolean => c.upstream.lists === 'live';

/** What a source lists: its contribution, or for a live upstream its caller's answer. */
function listedPart(
  c: UpstreamContribution,
  liveAnswers: ReadonlyMap<string, UpstreamContribution> | undefined,
): UpstreamContribution | undefined {
  return isLive(c) ? liveAnswers?.get(c.upstream.id) : c;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The prompts, resources and resource templates of a catalog, with their routes
 * (docs/operations.md §10 "Names", "Routing"): built once per published catalog from the upstream
 * contributions in config order. Lists are serialized once, sorted (prompts by published name
 * within (sourceId) order; resources and templates by source in config order, each in its
 * upstream's order), so every replica serves the same bytes.
 */
export class CatalogExtras {
  private constructor(
    readonly promptsJson: string,
    readonly resourcesJson: string,
    readonly resourceTemplatesJson: string,
    private readonly prompts: ReadonlyMap<string, CatalogPrompt>,
    /** Every URI a source claims (listed or routed only), with the first source to claim it. */
    private readonly claims: ReadonlyMap<string, ResourceClaim>,
    private readonly listedResources: readonly CatalogResource[],
    private readonly listedTemplates: readonly TemplateRoute[],
    private readonly templateIndex: TemplateIndex<TemplateRoute>,
    readonly features: CatalogFeatures,
    readonly conflicts: readonly ResourceConflict[],
    /** Upstreams that serve completion/complete, logging, subscriptions: by id. */
    readonly upstreams: ReadonlyMap<string, UpstreamContribution>,
    /** Templates tested against a URI by the build's coverage checks (its cost, counted). */
    readonly coverageTests: number,
  ) {}

  static readonly EMPTY = CatalogExtras.build([], false);

  /**
   * A `lists: live` upstream's contribution here is its catalog copy (the resources and
   * templates its scheduled pull lists): they route and cover URIs as any source's do, in its
   * place in the order, but are not listed, since its lists are fetched for each caller
   * (docs/operations.md §11 "Live lists"). Its listed entries are the caller's live answer,
   * when one is given.
   * @param contributions the upstreams' accepted lists, in config order, then registration order
   * @param hasBundleTools true when a bundle source is enabled (tools are served)
   * @param liveAnswers by upstream id: what a live upstream lists for this caller
   */
  static build(
    contributions: readonly UpstreamContribution[],
    hasBundleTools: boolean,
    liveAnswers?: ReadonlyMap<string, UpstreamContribution>,
  ): CatalogExtras {
    const listedOf = (c: UpstreamContribution) => listedPart(c, liveAnswers);
    const prompts = CatalogExtras.listedPrompts(contributions, liveAnswers);
    const claims = new Map<string, ResourceClaim>();
    const conflicts: ResourceConflict[] = [];
    // Every template in source order, listed ones first within a source (as resources are).
    const templates: TemplateRoute[] = [];
    const earlierTemplates: number[] = [];
    for (const c of contributions) {
      earlierTemplates.push(templates.length);
      const listed = listedOf(c)?.resourceTemplates ?? [];
      const routedOnly = isLive(c) ? c.resourceTemplates : [];
      for (const [entries, isListed] of [
        [listed, true],
        [routedOnly, false],
      ] as const)
        for (const t of entries)
          templates.push({
            uriTemplate: t.key,
            upstream: c.upstream,
            publishedJson: t.publishedJson,
            listed: isListed,
          });
    }
    const templateIndex = new TemplateIndex(
      templates.map((t) => ({ uriTemplate: t.uriTemplate, value: t })),
    );
    // Sources in config order, then registration order: the first to claim a URI keeps it,
    // by listing it or by a template that matches it, so a later source cannot take over a
    // URI another serves by listing it (docs/operations.md §10 "Routing").
    contributions.forEach((c, i) => {
      const listed = listedOf(c)?.resources ?? [];
      const routedOnly = isLive(c) ? c.resources : [];
      for (const [entries, isListed] of [
        [listed, true],
        [routedOnly, false],
      ] as const)
        for (const r of entries) {
          const kept = claims.get(r.key);
          if (kept !== undefined) {
            // a live upstream's answer and its catalog copy may both list a URI: one claim
            if (kept.resource.sourceId !== r.sourceId)
              conflicts.push({
                uri: r.key,
                keptBy: kept.resource.sourceId,
                droppedFrom: r.sourceId,
              });
            continue;
          }
          const covering = templateIndex.firstMatch(r.key, earlierTemplates[i]);
          if (covering !== undefined) {
            conflicts.push({
              uri: r.key,
              keptBy: covering.upstream.id,
              droppedFrom: r.sourceId,
              template: covering.uriTemplate,
            });
            continue;
          }
          claims.set(r.key, { resource: r, listed: isListed });
        }
    });
    const coverageTests = templateIndex.tests;
    const caps = (c: UpstreamContribution, key: string): Record<string, unknown> | undefined => {
      const value = c.capabilities[key];
      return isRecord(value) ? value : undefined;
    };
    const features: CatalogFeatures = {
      tools: hasBundleTools || contributions.some((c) => caps(c, 'tools') !== undefined),
      resources: contributions.some((c) => caps(c, 'resources') !== undefined),
      resourcesSubscribe: contributions.some((c) => caps(c, 'resources')?.subscribe === true),
      resourcesSubscribeModern: contributions.some(
        (c) => c.era === '2026' && caps(c, 'resources')?.subscribe === true,
      ),
      prompts: contributions.some((c) => caps(c, 'prompts') !== undefined),
      completions: contributions.some((c) => caps(c, 'completions') !== undefined),
      logging: contributions.some((c) => caps(c, 'logging') !== undefined),
    };
    const listedResources = [...claims.values()].filter((c) => c.listed).map((c) => c.resource);
    // the listed ones in source order, as listedTemplates gives them
    const listedTemplates = templates.filter((t) => t.listed);
    return new CatalogExtras(
      `[${[...prompts.values()].map((p) => p.publishedJson).join(',')}]`,
      `[${listedResources.map((r) => r.publishedJson).join(',')}]`,
      `[${listedTemplates.map((t) => t.publishedJson).join(',')}]`,
      prompts,
      claims,
      listedResources,
      listedTemplates,
      templateIndex,
      features,
      conflicts,
      new Map(contributions.map((c) => [c.upstream.id, c])),
      coverageTests,
    );
  }

  /**
   * The prompts `build` publishes, alone (a prompts list needs no resource coverage): by
   * published name, sources sorted by id, the first source's prompt kept for a name.
   */
  static listedPrompts(
    contributions: readonly UpstreamContribution[],
    liveAnswers?: ReadonlyMap<string, UpstreamContribution>,
  ): Map<string, CatalogPrompt> {
    const bySource = [...contributions].sort((a, b) =>
      compareCodeUnits(a.upstream.id, b.upstream.id),
    );
    const prompts = new Map<string, CatalogPrompt>();
    for (const c of bySource)
      for (const p of listedPart(c, liveAnswers)?.prompts ?? [])
        if (!prompts.has(p.name)) prompts.set(p.name, p);
    return prompts;
  }

  /**
   * The templates `build` lists, alone (listing them needs no coverage check): every source's
   * listed templates (a live upstream's: its caller's answer) in source order.
   */
  static listedTemplates(
    contributions: readonly UpstreamContribution[],
    liveAnswers?: ReadonlyMap<string, UpstreamContribution>,
  ): CatalogResource[] {
    const out: CatalogResource[] = [];
    for (const c of contributions)
      out.push(...(listedPart(c, liveAnswers)?.resourceTemplates ?? []));
    return out;
  }

  /**
   * The published prompts, resources and templates in list order, with their sources (filtered per
   * caller by docs/operations.md §13 "Access").
   */
  listed(): {
    readonly prompts: Iterable<CatalogPrompt>;
    readonly resources: Iterable<CatalogResource>;
    readonly resourceTemplates: Iterable<{
      readonly upstream: UpstreamDefinition;
      readonly publishedJson: string;
    }>;
  } {
    return {
      prompts: this.prompts.values(),
      resources: this.listedResources,
      resourceTemplates: this.listedTemplates,
    };
  }

  /** The prompt with this published name. */
  prompt(name: string): CatalogPrompt | undefined {
    return this.prompts.get(name);
  }

  /**
   * The upstream that serves this resource URI: the first source (config order, then
   * registration order) that lists it or has a template matching it (a later source's
   * listing of it is a conflict, not published; a live upstream's catalog copy counts in its
   * place), else the only upstream serving resources.
   */
  resourceOwner(uri: string): UpstreamDefinition | undefined {
    const claimed = this.claims.get(uri);
    if (claimed !== undefined) return claimed.resource.upstream;
    const covering = this.templateIndex.firstMatch(uri);
    if (covering !== undefined) return covering.upstream;
    const serving = [...this.upstreams.values()].filter(
      (c) => c.capabilities.resources !== undefined,
    );
    return serving.length === 1 ? serving[0]?.upstream : undefined;
  }

  /** The upstreams whose capabilities include `key` (e.g. "completions", "logging"). */
  upstreamsWith(key: string): readonly UpstreamDefinition[] {
    return [...this.upstreams.values()]
      .filter((c) => c.capabilities[key] !== undefined)
      .map((c) => c.upstream);
  }
}
