import { GATEWAY_TOOL_PREFIX, toolTagsOf } from '@app/wire';
import { createHash } from 'node:crypto';
import type { UpstreamDefinition } from '@app/config';
import type { CatalogTool } from '../catalog/catalog-tool';
import { compareCodeUnits } from '../catalog/merge-catalog';
import { MAX_TEMPLATES_ONE_URI_MEETS, templatesBeyondReach } from '../catalog/template-index';
import { type SchemaChecker, UPSTREAM_SCHEMA_BOUNDS } from '../manifest/schema-checker';
import { TimeSlicer } from '../time-slicer';
import { publishedForm, publishNames } from './published-names';
import type {
  UpstreamItem,
  UpstreamListHints,
  UpstreamListKey,
  UpstreamLists,
} from './upstream-pull-result';

/**
 * An upstream tool (or prompt, resource, template) not published, and why
 * (docs/operations.md §10 "Checks").
 */
export interface LeftOutItem {
  readonly list: 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
  /** Its name, URI or template as the upstream sent it (cut to 128 characters); "" when absent. */
  readonly name: string;
  /** In the gateway's words: safe for the status endpoint. */
  readonly reason: string;
}

/** A published prompt: its listed JSON and where prompts/get goes. */
export interface CatalogPrompt {
  readonly name: string;
  readonly originalName: string;
  readonly sourceId: string;
  readonly upstream: UpstreamDefinition;
  readonly publishedJson: string;
}

/** A published resource (URI unchanged) or resource template. */
export interface CatalogResource {
  /** The URI (resources) or the URI template (templates). */
  readonly key: string;
  readonly sourceId: string;
  readonly upstream: UpstreamDefinition;
  readonly publishedJson: string;
}

/** What one upstream's accepted lists add to the catalog: routes resolved, names published. */
export interface UpstreamContribution {
  readonly upstream: UpstreamDefinition;
  readonly era: '2025' | '2026';
  readonly capabilities: Readonly<Record<string, unknown>>;
  /** Sorted by published name. */
  readonly tools: readonly CatalogTool[];
  /** Sorted by published name. */
  readonly prompts: readonly CatalogPrompt[];
  /** In the upstream's order. */
  readonly resources: readonly CatalogResource[];
  readonly resourceTemplates: readonly CatalogResource[];
  readonly leftOut: readonly LeftOutItem[];
  /**
   * The cache hints each of its lists carried (docs/operations.md §11 "Cache hints"); empty for a
   * 2025 upstream.
   */
  readonly hints: Readonly<Partial<Record<UpstreamListKey, UpstreamListHints>>>;
  /** Equal fingerprints: equal contributions (the catalog is not rebuilt). */
  readonly fingerprint: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, 128) : '';
}

function sha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('base64url');
}

/**
 * Checks an upstream's lists by the MCP rules and publishes what passes
 * (docs/operations.md §10 "Checks", "Names"): a tool needs a non-empty string `name` and an
 * `inputSchema` object schema (root `type: "object"`) that compiles; a prompt a `name`; a resource
 * a `uri` and `name`; a template a `uriTemplate` and `name`. Whatever fails is left out and
 * reported, the rest is published (a third-party server is not a contract partner). A name listed
 * twice keeps its first entry. Tool and prompt names get the upstream's prefix (publishNames);
 * every item's JSON is what the upstream sent, only `name` replaced.
 */
export function acceptUpstreamLists(
  upstream: UpstreamDefinition,
  lists: UpstreamLists,
  schemas: SchemaChecker,
): UpstreamContribution {
  const tools = new ToolsCheck(upstream.namePrefix === '');
  for (const tool of lists.tools) tools.check(tool, schemas);
  const names = toolNamesOf(upstream, tools.good);
  const published = tools.good.map((tool) => catalogToolOf(upstream, names, tool));
  return contributionOf(upstream, lists, tools.leftOut, published);
}

/**
 * acceptUpstreamLists for the catalog's rounds: the same rules and result, with the event loop
 * given a turn between tools whenever the slicer's budget is spent (schema compilation is
 * the costly part), as manifests are validated (registry/src/time-slicer.ts).
 */
export async function acceptUpstreamListsSliced(
  upstream: UpstreamDefinition,
  lists: UpstreamLists,
  schemas: SchemaChecker,
  slicer = new TimeSlicer(),
): Promise<UpstreamContribution> {
  const tools = new ToolsCheck(upstream.namePrefix === '');
  for (const tool of lists.tools) {
    await slicer.maybeYield();
    tools.check(tool, schemas);
  }
  const names = toolNamesOf(upstream, tools.good);
  const published: CatalogTool[] = [];
  for (const tool of tools.good) {
    await slicer.maybeYield();
    published.push(catalogToolOf(upstream, names, tool));
  }
  return contributionOf(upstream, lists, tools.leftOut, published);
}

function toolNamesOf(
  upstream: UpstreamDefinition,
  goodTools: readonly UpstreamItem[],
): ReadonlyMap<string, string> {
  return publishNames(
    upstream.namePrefix,
    goodTools.map((t) => t.name as string),
  );
}

/** The tool's `_meta.tags` when they are tags (docs/operations.md §16); anything else is ignored. */
function tagsOf(tool: UpstreamItem): readonly string[] | undefined {
  const meta = isRecord(tool) && isRecord(tool._meta) ? tool._meta : undefined;
  const tags = toolTagsOf(meta?.tags);
  return tags === undefined || tags.length === 0 ? undefined : tags;
}

/** The resource URIs of the tool's MCP Apps view, both keys the extension has used; undefined for none. */
function viewUrisOf(tool: UpstreamItem): readonly string[] | undefined {
  const meta = isRecord(tool) && isRecord(tool._meta) ? tool._meta : undefined;
  if (meta === undefined) return undefined;
  const uris = [isRecord(meta.ui) ? meta.ui.resourceUri : undefined, meta['ui/resourceUri']].filter(
    (u): u is string => typeof u === 'string',
  );
  return uris.length === 0 ? undefined : uris;
}

/** A tool as the catalog publishes it: the upstream's JSON with only `name` replaced. */
function catalogToolOf(
  upstream: UpstreamDefinition,
  toolNames: ReadonlyMap<string, string>,
  tool: UpstreamItem,
): CatalogTool {
  const originalName = tool.name as string;
  const name = toolNames.get(originalName) ?? originalName;
  const publishedJson = JSON.stringify({ ...tool, name });
  const tags = tagsOf(tool);
  const viewUris = viewUrisOf(tool);
  return {
    name,
    sourceId: upstream.id,
    route: { kind: 'upstream', upstream, originalName },
    timeoutMillis: upstream.callMillis,
    version: '',
    publishedJson,
    fingerprint: sha1(publishedJson),
    ...(tags === undefined ? {} : { tags }),
    ...(viewUris === undefined ? {} : { viewUris }),
  };
}

/** The tools that pass the MCP rules, in order, and those left out. */
class ToolsCheck {
  readonly leftOut: LeftOutItem[] = [];
  readonly good: UpstreamItem[] = [];
  private readonly seen = new Set<string>();

  /** @param unprefixed the upstream publishes its tools' own names (namePrefix "") */
  constructor(private readonly unprefixed: boolean) {}

  check(tool: UpstreamItem, schemas: SchemaChecker): void {
    const name = isRecord(tool) ? tool.name : undefined;
    // the name as it would be published (`gateway..x` is published `gateway__x`), in any letter
    // case: a look-alike of the gateway's own tools is as misleading (config/prefix-rules.ts)
    const reason =
      this.unprefixed &&
      typeof name === 'string' &&
      publishedForm('', name).toLowerCase().startsWith(GATEWAY_TOOL_PREFIX)
        ? `the name is in "${GATEWAY_TOOL_PREFIX}" (in any letter case), the prefix reserved for the gateway's own tools (docs/operations.md §16 "Tool search")`
        : toolProblem(tool, schemas);
    if (reason !== undefined) {
      this.leftOut.push({ list: 'tools', name: shown(name), reason });
    } else if (this.seen.has(name as string)) {
      this.leftOut.push({
        list: 'tools',
        name: shown(name),
        reason: 'listed twice; the first is kept',
      });
    } else {
      this.seen.add(name as string);
      this.good.push(tool);
    }
  }
}

function contributionOf(
  upstream: UpstreamDefinition,
  lists: UpstreamLists,
  leftOut: LeftOutItem[],
  tools: CatalogTool[],
): UpstreamContribution {
  const goodPrompts: UpstreamItem[] = [];
  const seenPrompts = new Set<string>();
  for (const prompt of lists.prompts) {
    const name = isRecord(prompt) ? prompt.name : undefined;
    if (typeof name !== 'string' || name === '') {
      leftOut.push({ list: 'prompts', name: '', reason: 'name must be a non-empty string' });
    } else if (seenPrompts.has(name)) {
      leftOut.push({
        list: 'prompts',
        name: shown(name),
        reason: 'listed twice; the first is kept',
      });
    } else {
      seenPrompts.add(name);
      goodPrompts.push(prompt);
    }
  }

  tools.sort((a, b) => compareCodeUnits(a.name, b.name));

  const promptNames = publishNames(
    upstream.namePrefix,
    goodPrompts.map((p) => p.name as string),
  );
  const prompts: CatalogPrompt[] = goodPrompts.map((prompt) => {
    const originalName = prompt.name as string;
    const name = promptNames.get(originalName) ?? originalName;
    return {
      name,
      originalName,
      sourceId: upstream.id,
      upstream,
      publishedJson: JSON.stringify({ ...prompt, name }),
    };
  });
  prompts.sort((a, b) => compareCodeUnits(a.name, b.name));

  const resources = acceptResources(upstream, lists.resources, 'uri', 'resources', leftOut);
  const resourceTemplates = withinReach(
    acceptResources(upstream, lists.resourceTemplates, 'uriTemplate', 'resourceTemplates', leftOut),
    leftOut,
  );
  const fingerprint = sha1(
    [
      lists.era,
      JSON.stringify(lists.capabilities),
      ...tools.map((t) => t.publishedJson),
      '\u0000',
      ...prompts.map((p) => p.publishedJson),
      '\u0000',
      ...resources.map((r) => r.publishedJson),
      '\u0000',
      ...resourceTemplates.map((r) => r.publishedJson),
      '\u0000',
      JSON.stringify(lists.hints ?? {}),
    ].join('\n'),
  );
  return {
    upstream,
    era: lists.era,
    capabilities: lists.capabilities,
    tools,
    prompts,
    resources,
    resourceTemplates,
    leftOut,
    hints: lists.hints ?? {},
    fingerprint,
  };
}

function toolProblem(tool: unknown, schemas: SchemaChecker): string | undefined {
  if (!isRecord(tool)) return 'not a JSON object';
  if (typeof tool.name !== 'string' || tool.name === '') return 'name must be a non-empty string';
  const schema = tool.inputSchema;
  if (!isRecord(schema)) return 'inputSchema must be a JSON Schema object';
  if (schema.type !== 'object') return 'inputSchema must have type "object" at its root';
  // an upstream may be hostile: no one schema of it holds the event loop (SchemaBounds)
  const problem = schemas.check(schema, { bounds: UPSTREAM_SCHEMA_BOUNDS });
  if (problem !== undefined) return `inputSchema does not compile: ${problem.rule}`;
  return undefined;
}

/**
 * The templates the template index takes (templatesBeyondReach): past
 * MAX_TEMPLATES_ONE_URI_MEETS a URI could meet, the later ones are left out, so covering one
 * URI never tests more than that many of one upstream's templates (docs/operations.md §10
 * "Routing").
 */
function withinReach(templates: CatalogResource[], leftOut: LeftOutItem[]): CatalogResource[] {
  const beyond = templatesBeyondReach(templates.map((t) => t.key));
  if (beyond.every((b) => b === undefined)) return templates;
  return templates.filter((t, i) => {
    const ends = beyond[i];
    if (ends === undefined) return true;
    leftOut.push({
      list: 'resourceTemplates',
      name: shown(t.key),
      reason:
        `a URI could meet more than ${MAX_TEMPLATES_ONE_URI_MEETS} of this upstream's ` +
        `templates: ${MAX_TEMPLATES_ONE_URI_MEETS} listed before it have literal starts and ends ` +
        `nesting with its "${shown(ends.prefix)}" and "${shown(ends.suffix)}"`,
    });
    return false;
  });
}

function acceptResources(
  upstream: UpstreamDefinition,
  items: readonly UpstreamItem[],
  keyField: 'uri' | 'uriTemplate',
  list: 'resources' | 'resourceTemplates',
  leftOut: LeftOutItem[],
): CatalogResource[] {
  const out: CatalogResource[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const key = isRecord(item) ? item[keyField] : undefined;
    if (typeof key !== 'string' || key === '' || typeof item.name !== 'string') {
      leftOut.push({
        list,
        name: shown(key),
        reason: `${keyField} and name must be non-empty strings`,
      });
    } else if (seen.has(key)) {
      leftOut.push({ list, name: shown(key), reason: 'listed twice; the first is kept' });
    } else {
      seen.add(key);
      out.push({ key, sourceId: upstream.id, upstream, publishedJson: JSON.stringify(item) });
    }
  }
  return out;
}
