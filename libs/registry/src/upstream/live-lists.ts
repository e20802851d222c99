import { createHash } from 'node:crypto';
import type { UpstreamDefinition } from '@app/config';
import { CatalogExtras } from '../catalog/catalog-extras';
import type { CatalogSnapshot } from '../catalog/catalog-snapshot';
import type { CatalogTool } from '../catalog/catalog-tool';
import { collisionsOf, compareCodeUnits } from '../catalog/merge-catalog';
import { withOwnViews } from '../catalog/own-views';
import { SchemaChecker } from '../manifest/schema-checker';
import { acceptUpstreamListsSliced, type UpstreamContribution } from './upstream-contribution';
import type { UpstreamItem } from './upstream-pull-result';

/** The four lists an upstream serves, by their result member (docs/operations.md §10 "Lists"). */
export type LiveListKey = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** One live upstream's answer to one list method, before the catalog rules are applied. */
export interface LiveListAnswer {
  readonly upstream: UpstreamDefinition;
  readonly era: '2025' | '2026';
  readonly capabilities: Readonly<Record<string, unknown>>;
  /** Every page's items joined, as the upstream sent them. */
  readonly items: readonly UpstreamItem[];
}

/** A merged list: its JSON array text, and the live sources left out of it and why. */
export interface LiveMerge {
  /** The list's JSON array, e.g. `[{"name":"a__x",…},…]`. */
  readonly json: string;
  /** Live upstreams whose entries were not published (a name another source publishes too). */
  readonly skipped: readonly { readonly id: string; readonly reason: string }[];
}

/** Distinct schemas remembered as compiled before the memo is trimmed to the last ones seen. */
const SCHEMA_MEMO_LIMIT = 4096;

/** Resources lists built per catalog (sets of live answers); the oldest go first beyond it. */
const RESOURCE_BUILDS_PER_CATALOG = 32;

/** One resources list built: for a catalog and the live answers it was built with. */
interface ResourceBuild {
  readonly extras: CatalogExtras;
  /** The live answers' upstream definitions, by id. */
  readonly upstreams: ReadonlyMap<string, UpstreamDefinition>;
}

/** (upstream, list) pairs whose last accepted answer is remembered; the oldest go first beyond it. */
const ACCEPTED_MEMO_LIMIT = 1024;

/** The last answer accepted for one (upstream, list): its digest and what acceptance made of it. */
interface AcceptedAnswer {
  readonly upstream: UpstreamDefinition;
  readonly digest: string;
  readonly contribution: UpstreamContribution;
}

/**
 * The catalog rules applied to live lists (docs/operations.md §11 "Live lists"), reused, not
 * copied: a live answer is checked and its names published by acceptUpstreamListsSliced (MCP tool checks,
 * prefix, reversible names) exactly as a pulled one, and merged with the snapshot's sources by the
 * catalog's own rules: tools in (sourceId, name) order with a name published twice rejecting the
 * sources involved (contract §7.6, collisionsOf; only live sources can be left out, the
 * snapshot already passed), prompts, resources and templates by CatalogExtras. Pure but for
 * three memos: compiled schemas; per (upstream, list) the last accepted answer (reused
 * when the next answer's digest is the same, so an unchanged live list is not re-checked on
 * every request; any change is checked in full); per catalog and set of live resources
 * answers, the claims and coverage built. A list pays only for what it holds: prompts and
 * templates lists run no resource coverage (docs/operations.md §11 "Live lists").
 */
export class LiveListMerger {
  private readonly schemas = new SchemaChecker();
  private readonly accepted = new Map<string, AcceptedAnswer>();
  /** By catalog (dropped with it), then by the live answers' ids and fingerprints. */
  private readonly resourceBuilds = new WeakMap<CatalogSnapshot, Map<string, ResourceBuild>>();
  /** Templates tested by the coverage checks of resources lists built so far (counted cost). */
  coverageTests = 0;

  /**
   * The answer as a contribution of its own list only (the other lists empty). An answer
   * equal to the last one accepted for the same upstream definition and list (SHA-256 of its
   * era, capabilities and items as JSON text) gets that same contribution, leftOut included,
   * so callers log the same left-out entries; anything else is checked by acceptUpstreamListsSliced.
   */
  async accept(key: LiveListKey, answer: LiveListAnswer): Promise<UpstreamContribution> {
    const memoKey = `${answer.upstream.id}\u0000${key}`;
    const digest = createHash('sha256')
      .update(answer.era)
      .update('\u0000')
      .update(JSON.stringify(answer.capabilities))
      .update('\u0000')
      .update(JSON.stringify(answer.items))
      .digest('base64url');
    const last = this.accepted.get(memoKey);
    if (last !== undefined && last.digest === digest && last.upstream === answer.upstream)
      return last.contribution;
    const contribution = await this.check(key, answer);
    this.accepted.delete(memoKey);
    this.accepted.set(memoKey, { upstream: answer.upstream, digest, contribution });
    if (this.accepted.size > ACCEPTED_MEMO_LIMIT) {
      const oldest = this.accepted.keys().next();
      if (oldest.done !== true) this.accepted.delete(oldest.value);
    }
    return contribution;
  }

  /**
   * The catalog rules on one answer, no memo of answers, with the event loop given a turn
   * between items as a pull's are (acceptUpstreamListsSliced): an upstream that changes its
   * answer every time must not hold every caller's request behind its schemas.
   */
  private async check(key: LiveListKey, answer: LiveListAnswer): Promise<UpstreamContribution> {
    const contribution = await acceptUpstreamListsSliced(
      answer.upstream,
      {
        era: answer.era,
        capabilities: answer.capabilities,
        tools: key === 'tools' ? answer.items : [],
        prompts: key === 'prompts' ? answer.items : [],
        resources: key === 'resources' ? answer.items : [],
        resourceTemplates: key === 'resourceTemplates' ? answer.items : [],
      },
      this.schemas,
    );
    if (this.schemas.size > SCHEMA_MEMO_LIMIT) this.schemas.retainOnlySeen();
    return contribution;
  }

  /**
   * The list `key` of the catalog with the live contributions merged in.
   * @param live contributions from `accept` for the same key, any order
   * @param configOrder every configured upstream id in config order (resources keep the
   *   first source's URI); the catalog's registered upstreams follow in its own order
   */
  async merge(
    catalog: CatalogSnapshot,
    key: LiveListKey,
    live: readonly UpstreamContribution[],
    configOrder: readonly string[],
    visible?: LiveVisibility,
  ): Promise<LiveMerge> {
    if (key === 'tools') return this.mergeTools(catalog, live, visible);
    const liveById = new Map(live.map((c) => [c.upstream.id, c]));
    const configured = new Set(configOrder);
    const order = [
      ...configOrder,
      ...[...catalog.extras.upstreams.keys()].filter((id) => !configured.has(id)),
    ];
    const contributions: UpstreamContribution[] = [];
    for (const id of order) {
      // a live upstream's catalog copy routes and covers URIs; its answer is what is listed
      const c = catalog.extras.upstreams.get(id) ?? liveById.get(id);
      if (c !== undefined) contributions.push(c);
    }
    const shown = (sourceId: string): boolean => visible === undefined || visible.source(sourceId);
    const entries: string[] = [];
    if (key === 'prompts') {
      for (const p of CatalogExtras.listedPrompts(contributions, liveById).values())
        if (shown(p.sourceId)) entries.push(p.publishedJson);
    } else if (key === 'resourceTemplates') {
      for (const t of CatalogExtras.listedTemplates(contributions, liveById))
        if (shown(t.sourceId)) entries.push(t.publishedJson);
    } else {
      // Every source claims its URIs, seen by this caller or not, so the list holds what
      // resources/read routes to (docs/operations.md §10 "Routing"); the caller then sees
      // the entries of its sources.
      const extras = this.resourceClaims(catalog, contributions, liveById);
      if (visible === undefined) return { json: extras.resourcesJson, skipped: [] };
      for (const r of extras.listed().resources)
        if (shown(r.sourceId)) entries.push(r.publishedJson);
    }
    return { json: `[${entries.join(',')}]`, skipped: [] };
  }

  /**
   * The catalog's sources with these live answers, claims and coverage built (the cost of a
   * resources list), once per catalog and set of live answers: equal answers (by fingerprint)
   * of the same upstreams reuse the build, so a resources/list whose live answers did not
   * change tests no template.
   */
  private resourceClaims(
    catalog: CatalogSnapshot,
    contributions: readonly UpstreamContribution[],
    liveById: ReadonlyMap<string, UpstreamContribution>,
  ): CatalogExtras {
    let builds = this.resourceBuilds.get(catalog);
    if (builds === undefined) {
      builds = new Map();
      this.resourceBuilds.set(catalog, builds);
    }
    const key = [...liveById.values()]
      .map((c) => `${c.upstream.id}\u0000${c.fingerprint}`)
      .sort()
      .join('\u0001');
    const built = builds.get(key);
    // (the same definitions too: an id's fingerprint says nothing of where it routes)
    if (
      built !== undefined &&
      [...liveById.values()].every((c) => built.upstreams.get(c.upstream.id) === c.upstream)
    )
      return built.extras;
    // what the answers list of what routes elsewhere is left out: decided once per build, with
    // the catalog it is cached for (a repeated list tests no URI again)
    const extras = CatalogExtras.build(contributions, false, routedAnswers(catalog, liveById));
    this.coverageTests += extras.coverageTests;
    builds.delete(key);
    builds.set(key, {
      extras,
      upstreams: new Map([...liveById.values()].map((c) => [c.upstream.id, c.upstream])),
    });
    if (builds.size > RESOURCE_BUILDS_PER_CATALOG) {
      const oldest = builds.keys().next();
      if (oldest.done !== true) builds.delete(oldest.value);
    }
    return extras;
  }

  private async mergeTools(
    catalog: CatalogSnapshot,
    live: readonly UpstreamContribution[],
    visible: LiveVisibility | undefined,
  ): Promise<LiveMerge> {
    const skipped: { id: string; reason: string }[] = [];
    // as in the catalog: a tool whose MCP Apps view another source serves is not listed
    let kept = live.map((c) => {
      const own = withOwnViews(c.tools, catalog.extras);
      return own.tools === c.tools ? c : { ...c, tools: own.tools };
    });
    let tools = interleave(catalog.tools, kept);
    const { collisions, involved } = await collisionsOf(tools);
    if (collisions.length > 0) {
      kept = kept.filter((c) => !involved.has(c.upstream.id));
      for (const c of live)
        if (involved.has(c.upstream.id))
          skipped.push({
            id: c.upstream.id,
            reason: `tool names published by more than one source: ${collisions.slice(0, 10).join(', ')}`,
          });
      tools = interleave(catalog.tools, kept);
    }
    // collisions are judged over every source; the caller then sees what it may use
    if (visible !== undefined) tools = tools.filter((t) => visible.tool(t.sourceId, t.name));
    return { json: `[${tools.map((t) => t.publishedJson).join(',')}]`, skipped };
  }
}

/**
 * What one caller may see of a merged list (the access rules, docs/operations.md §13 "Access"), for
 * a caller whose grants are restricted: tools by source or published name, the other lists by
 * source.
 */
export interface LiveVisibility {
  tool(sourceId: string, name: string): boolean;
  source(sourceId: string): boolean;
}

/** Snapshot tools (already in (sourceId, name) order) and live tools in one (sourceId, name) order. */
function interleave(
  snapshot: readonly CatalogTool[],
  live: readonly UpstreamContribution[],
): CatalogTool[] {
  if (live.length === 0) return [...snapshot];
  const sources = [...live].sort((a, b) => compareCodeUnits(a.upstream.id, b.upstream.id));
  const out: CatalogTool[] = [];
  let next = 0;
  for (const tool of snapshot) {
    while (next < sources.length && compareCodeUnits(sources[next]!.upstream.id, tool.sourceId) < 0)
      out.push(...sources[next++]!.tools);
    out.push(tool);
  }
  while (next < sources.length) out.push(...sources[next++]!.tools);
  return out;
}

/**
 * The live answers with only the resources `resources/read` routes to their upstream: routing
 * follows the catalog (a live upstream's catalog copy claims in its place), so a URI a live
 * upstream lists only to some callers — another source's, or one nothing routes to it — is not
 * listed from its answer (docs/operations.md §11 "Live lists": the list holds only what
 * `resources/read` routes to), and cannot hide the entry of the source that serves it.
 */
function routedAnswers(
  catalog: CatalogSnapshot,
  liveById: ReadonlyMap<string, UpstreamContribution>,
): ReadonlyMap<string, UpstreamContribution> {
  let out: Map<string, UpstreamContribution> | undefined;
  for (const [id, answer] of liveById) {
    const routed = answer.resources.filter((r) => catalog.extras.resourceOwner(r.key)?.id === id);
    if (routed.length === answer.resources.length) continue;
    out ??= new Map(liveById);
    out.set(id, { ...answer, resources: routed });
  }
  return out ?? liveById;
}
