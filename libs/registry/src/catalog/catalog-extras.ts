import type { UpstreamDefinition } from '@app/config';
import type {
  CatalogPrompt,
  CatalogResource,
  UpstreamContribution,
} from '../upstream/upstream-contribution';
import { compareCodeUnits } from './merge-catalog';

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

/** Which MCP features the catalog's sources can serve (issue 10 §6). */
export interface CatalogFeatures {
  readonly tools: boolean;
  readonly resources: boolean;
  readonly resourcesSubscribe: boolean;
  readonly prompts: boolean;
  readonly completions: boolean;
  readonly logging: boolean;
}

interface TemplateRoute {
  readonly matcher: RegExp;
  /** The template's text before its first expression: a URI that does not start with it cannot match. */
  readonly literalPrefix: string;
  readonly uriTemplate: string;
  readonly upstream: UpstreamDefinition;
  /** Its resources/templates/list entry (a caller's filtered list is built from these; issue 12 §3). */
  readonly publishedJson: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A URI template (RFC 6570) as a whole-string pattern, so a template covers every URI it can
 * expand to (docs/operations.md §10 "Routing"). `{x}` and `{+x}` match one or more characters
 * (`+` may span `/`, the simple form may not); the operators that write a leading character
 * (RFC 6570 §3.2.5–3.2.9) match that character and what follows it, or nothing (undefined
 * variables expand to ""): `{/x,y}` one `/segment` per variable (any number with `*`),
 * `{.x}` `.label`, `{;x}` `;x=v…`, `{?x}` `?x=v…`, `{&x}` `&x=v…` (none of these spans a
 * `/`, which their expansion percent-encodes), and `{#x}` `#fragment` (reserved: may span `/`).
 */
export function templateMatcher(uriTemplate: string): RegExp {
  let pattern = '';
  let last = 0;
  for (const m of uriTemplate.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    pattern += uriTemplate.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern += expressionPattern(m[1] ?? '', m[2] ?? '');
    last = (m.index ?? 0) + m[0].length;
  }
  pattern += uriTemplate.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${pattern}$`, 's');
}

/** The pattern of one `{operator varlist}` expression (see templateMatcher). */
function expressionPattern(operator: string, varList: string): string {
  switch (operator) {
    case '+':
      return '.+';
    case '#':
      return '(?:#.*)?';
    case '/': {
      const vars = varList.split(',');
      const explode = vars.some((v) => v.trim().endsWith('*'));
      return explode ? '(?:/[^/?#]*)*' : `(?:/[^/?#]*){0,${vars.length}}`;
    }
    case '.':
      return '(?:\\.[^/?#]*)?';
    case ';':
      return '(?:;[^/?#]*)?';
    case '?':
      return '(?:\\?[^/#]*)?';
    case '&':
      return '(?:&[^/#]*)?';
    default:
      return '[^/]+';
  }
}

/** The literal text of a URI template before its first `{…}` expression. */
function literalPrefix(uriTemplate: string): string {
  const brace = uriTemplate.indexOf('{');
  return brace < 0 ? uriTemplate : uriTemplate.slice(0, brace);
}

/** The first of `templates[0..end)` matching `uri`, in source order. */
function firstMatch(
  templates: readonly TemplateRoute[],
  end: number,
  uri: string,
): TemplateRoute | undefined {
  for (let i = 0; i < end; i++) {
    const t = templates[i] as TemplateRoute;
    if (uri.startsWith(t.literalPrefix) && t.matcher.test(uri)) return t;
  }
  return undefined;
}

/**
 * The prompts, resources and resource templates of a catalog, with their routes (issue 10
 * §4, §5): built once per published catalog from the upstream contributions in config order.
 * Lists are serialized once, sorted (prompts by published name within (sourceId) order;
 * resources and templates by source in config order, each in its upstream's order), so every
 * replica serves the same bytes.
 */
export class CatalogExtras {
  private constructor(
    readonly promptsJson: string,
    readonly resourcesJson: string,
    readonly resourceTemplatesJson: string,
    private readonly prompts: ReadonlyMap<string, CatalogPrompt>,
    private readonly resources: ReadonlyMap<string, CatalogResource>,
    private readonly templates: readonly TemplateRoute[],
    readonly features: CatalogFeatures,
    readonly conflicts: readonly ResourceConflict[],
    /** Upstreams that serve completion/complete, logging, subscriptions: by id. */
    readonly upstreams: ReadonlyMap<string, UpstreamContribution>,
  ) {}

  static readonly EMPTY = CatalogExtras.build([], false);

  /**
   * @param contributions the upstreams' accepted lists, in config order
   * @param hasBundleTools true when a bundle source is enabled (tools are served)
   */
  static build(
    contributions: readonly UpstreamContribution[],
    hasBundleTools: boolean,
  ): CatalogExtras {
    const bySource = [...contributions].sort((a, b) =>
      compareCodeUnits(a.upstream.id, b.upstream.id),
    );
    const prompts = new Map<string, CatalogPrompt>();
    for (const c of bySource)
      for (const p of c.prompts) if (!prompts.has(p.name)) prompts.set(p.name, p);
    const resources = new Map<string, CatalogResource>();
    const conflicts: ResourceConflict[] = [];
    const templates: TemplateRoute[] = [];
    const templateJson: string[] = [];
    // Sources in config order, then registration order: the first to claim a URI keeps it,
    // by listing it or by a template that matches it, so a later source cannot take over a
    // URI another serves by listing it (docs/operations.md §10 "Routing").
    for (const c of contributions) {
      const earlierTemplates = templates.length;
      for (const r of c.resources) {
        const kept = resources.get(r.key);
        if (kept !== undefined) {
          conflicts.push({ uri: r.key, keptBy: kept.sourceId, droppedFrom: r.sourceId });
          continue;
        }
        const covering = firstMatch(templates, earlierTemplates, r.key);
        if (covering !== undefined) {
          conflicts.push({
            uri: r.key,
            keptBy: covering.upstream.id,
            droppedFrom: r.sourceId,
            template: covering.uriTemplate,
          });
          continue;
        }
        resources.set(r.key, r);
      }
      for (const t of c.resourceTemplates) {
        templates.push({
          matcher: templateMatcher(t.key),
          literalPrefix: literalPrefix(t.key),
          uriTemplate: t.key,
          upstream: c.upstream,
          publishedJson: t.publishedJson,
        });
        templateJson.push(t.publishedJson);
      }
    }
    const caps = (c: UpstreamContribution, key: string): Record<string, unknown> | undefined => {
      const value = c.capabilities[key];
      return isRecord(value) ? value : undefined;
    };
    const features: CatalogFeatures = {
      tools: hasBundleTools || contributions.some((c) => caps(c, 'tools') !== undefined),
      resources: contributions.some((c) => caps(c, 'resources') !== undefined),
      resourcesSubscribe: contributions.some((c) => caps(c, 'resources')?.subscribe === true),
      prompts: contributions.some((c) => caps(c, 'prompts') !== undefined),
      completions: contributions.some((c) => caps(c, 'completions') !== undefined),
      logging: contributions.some((c) => caps(c, 'logging') !== undefined),
    };
    return new CatalogExtras(
      `[${[...prompts.values()].map((p) => p.publishedJson).join(',')}]`,
      `[${[...resources.values()].map((r) => r.publishedJson).join(',')}]`,
      `[${templateJson.join(',')}]`,
      prompts,
      resources,
      templates,
      features,
      conflicts,
      new Map(contributions.map((c) => [c.upstream.id, c])),
    );
  }

  /** The published prompts, resources and templates in list order, with their sources (issue 12 §3 filters them per caller). */
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
      resources: this.resources.values(),
      resourceTemplates: this.templates,
    };
  }

  /** The prompt with this published name. */
  prompt(name: string): CatalogPrompt | undefined {
    return this.prompts.get(name);
  }

  /**
   * The upstream that serves this resource URI: the first source (config order, then
   * registration order) that lists it or has a template matching it (a later source's
   * listing of it is a conflict, not published), else the only upstream serving resources.
   */
  resourceOwner(uri: string): UpstreamDefinition | undefined {
    const listed = this.resources.get(uri);
    if (listed !== undefined) return listed.upstream;
    const covering = firstMatch(this.templates, this.templates.length, uri);
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
