import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { GatewayMetrics } from '@app/observability';
import MiniSearch from 'minisearch';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { allowsTool, type CallerAccess } from '@app/identity';
import { RegistryService, type CatalogSnapshot, type CatalogTool } from '@app/registry';
import { GATEWAY_TOOL_PREFIX } from '@app/wire';
import { VirtualServers } from '../servers/virtual-servers.service';
import { MAX_SELECTED_TOOLS } from './tool-selections';
import { isHiddenAppTool } from '../servers/client-extensions';

/** The gateway's own tools (docs/operations.md §16 "Tool search"). */
export const SEARCH_TOOL = `${GATEWAY_TOOL_PREFIX}search_tools`;
export const DESCRIBE_TOOL = `${GATEWAY_TOOL_PREFIX}describe_tools`;
export const CALL_TOOL = `${GATEWAY_TOOL_PREFIX}call_tool`;
export const SELECT_TOOL = `${GATEWAY_TOOL_PREFIX}select_tools`;

/** Results of one search at most, and names one describe takes. */
const MAX_RESULTS = 25;
const DEFAULT_RESULTS = 10;
const MAX_DESCRIBED = 25;
/** A one-line description is cut here. */
const LINE_CHARS = 200;
/**
 * What of a description is indexed: its start, where a tool says what it does. Some servers
 * append pages of usage notes, whose every word would otherwise match every query.
 */
const INDEXED_DESCRIPTION_CHARS = 400;
/** Words that say nothing about a tool. */
const STOP_WORDS = new Set(
  'a an and are as at be by for from has have i in is it its me my of on or our that the this to was with you your'.split(
    ' ',
  ),
);

/** The `names` argument of describe and select: tool names from a search. */
function namesSchema(minItems: number, maxItems: number): object {
  return {
    type: 'array',
    items: { type: 'string' },
    ...(minItems > 0 ? { minItems } : {}),
    maxItems,
    description: 'Tool names from a search',
  };
}

/** The three tools `tools/list` gives where search is on, written once. */
const SEARCH_TOOLS = [
  {
    name: SEARCH_TOOL,
    title: 'Search the tools',
    description:
      'Finds the tools for a task among every tool this server offers. Give the task in words; get the best matching tool names with a one-line description each. Then describe the ones to use, and call them.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'The task, in words' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_RESULTS,
          description: `How many tools at most (default ${DEFAULT_RESULTS})`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: DESCRIBE_TOOL,
    title: 'Describe tools',
    description:
      'Gives the full definitions (input and output schemas, annotations) of the named tools.',
    inputSchema: {
      type: 'object',
      properties: {
        names: namesSchema(1, MAX_DESCRIBED),
      },
      required: ['names'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      'Calls one tool by name with its arguments, exactly as calling it directly would (the same checks, the same answer).',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'The tool name' },
        arguments: { type: 'object', description: "The tool's arguments" },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
];
/** Offered to 2025 sessions where selection is on (docs/operations.md §16 "Tool selection"). */
const SELECT_TOOL_DEFINITION = {
  name: SELECT_TOOL,
  title: 'Select tools',
  description:
    "Makes the named tools (from a search) this session's tool list, replacing the previous selection; the list_changed notification that follows tells the client to list the tools again. An empty list clears the selection.",
  inputSchema: {
    type: 'object',
    properties: {
      names: namesSchema(0, MAX_SELECTED_TOOLS),
    },
    required: ['names'],
    additionalProperties: false,
  },
};
/** Each gateway tool's definition as JSON, by name: what its arguments are checked against. */
const DEFINITIONS: ReadonlyMap<string, string> = new Map(
  [...SEARCH_TOOLS, SELECT_TOOL_DEFINITION].map((t) => [t.name, JSON.stringify(t)]),
);
const SEARCH_TOOLS_JSON = SEARCH_TOOLS.map((t) => DEFINITIONS.get(t.name) as string).join(',');
const SELECT_TOOL_JSON = DEFINITIONS.get(SELECT_TOOL) as string;

/**
 * Who asks (a MethodContext has both): its grant on the path, and the capabilities its client
 * declared (an MCP Apps app-only tool is not offered to a client without the extension).
 */
export interface SearchCaller {
  readonly access?: CallerAccess;
  readonly clientCapabilities?: unknown;
}

/** One search hit, as `gateway__search_tools` answers it. */
export interface SearchHit {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
}

interface Indexed {
  readonly index: MiniSearch;
  readonly tools: readonly CatalogTool[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Words of a tool name or text: split on separators and camelCase, stop words left out. */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0 && !STOP_WORDS.has(w));
}

/** Words of a query that are searched: the first MAX_QUERY_WORDS of at most MAX_WORD_CHARS. */
const MAX_QUERY_WORDS = 32;
const MAX_WORD_CHARS = 64;

function queryWords(text: string): string[] {
  return words(text.slice(0, 4 * MAX_QUERY_WORDS * MAX_WORD_CHARS))
    .filter((w) => w.length <= MAX_WORD_CHARS)
    .slice(0, MAX_QUERY_WORDS);
}

/** The property names of a schema, nested ones included (what an agent's task mentions). */
function propertyNames(schema: unknown, out: string[] = [], depth = 0): string[] {
  if (!isRecord(schema) || depth > 6) return out;
  const properties = schema.properties;
  if (isRecord(properties))
    for (const [name, sub] of Object.entries(properties)) {
      out.push(name);
      propertyNames(sub, out, depth + 1);
    }
  if (isRecord(schema.items)) propertyNames(schema.items, out, depth + 1);
  return out;
}

function firstLine(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line;
}

/**
 * Tool search (docs/operations.md §16 "Tool search"): where it is on (`mcp.toolSearch` for `/mcp`,
 * `toolSearch` of a virtual server for its path), `tools/list` gives three gateway tools instead
 * of the catalog: search (a task in words → names, titles, one-line descriptions), describe
 * (names → full definitions) and call (name + arguments, through the same path as a direct
 * call). Ranked by MiniSearch (BM25 with prefix and fuzzy terms) over names, titles,
 * descriptions, schema property names and tags, indexed once per catalog when it is published;
 * every answer holds only tools the caller may use on that path.
 */
@Injectable()
export class ToolSearch implements OnModuleInit {
  private readonly onMcp: boolean;
  private readonly selectOnMcp: boolean;
  private readonly indexes = new WeakMap<CatalogSnapshot, Indexed>();

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly servers: VirtualServers,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.onMcp = config.mcp.toolSearch.enabled;
    this.selectOnMcp = this.onMcp && config.mcp.toolSearch.select;
  }

  onModuleInit(): void {
    if (!this.onMcp && !this.servers.anySearch) return;
    // indexed after each publication, off the request path
    this.registry.onPublished((_previous, next) => {
      setImmediate(() => this.indexOf(next));
    });
  }

  /** A gateway tool's definition as JSON; undefined for any other name. */
  definitionJson(name: string): string | undefined {
    return DEFINITIONS.get(name);
  }

  /** Whether the gateway's search tools replace the list for this grant's path. */
  enabledFor(access: CallerAccess | undefined): boolean {
    const server = VirtualServers.serverOf(access);
    return server === undefined ? this.onMcp : this.servers.searchOn(server);
  }

  /**
   * Whether this request may select tools: selection on for its path, a 2025 session opened
   * for the caller (a 2026 request carries no session to keep a selection in, so it is not
   * offered one).
   */
  selectFor(
    access: CallerAccess | undefined,
    sessionId: string | undefined,
    modern: boolean,
  ): boolean {
    if (sessionId === undefined || modern) return false;
    const server = VirtualServers.serverOf(access);
    return server === undefined ? this.selectOnMcp : this.servers.selectOn(server);
  }

  /**
   * `tools/list` where search is on, as JSON text: the three gateway tools; where selection is
   * offered, the select tool too and the session's selected tools the caller may still use.
   */
  toolsJson(selection?: readonly string[], who: SearchCaller = {}): string {
    if (selection === undefined) return `[${SEARCH_TOOLS_JSON}]`;
    const catalog = this.registry.current();
    const selected = selection.flatMap((name) => {
      const tool = this.usable(catalog, name, who);
      return tool === undefined ? [] : [tool.publishedJson];
    });
    return `[${[SEARCH_TOOLS_JSON, SELECT_TOOL_JSON, ...selected].join(',')}]`;
  }

  /** The named tools the caller may use (what a selection keeps), and the names it may not. */
  selectable(
    names: readonly string[],
    who: SearchCaller,
  ): { readonly selected: readonly string[]; readonly unknown: readonly string[] } {
    const catalog = this.registry.current();
    const selected: string[] = [];
    const unknown: string[] = [];
    for (const name of new Set(names)) {
      if (name.startsWith(GATEWAY_TOOL_PREFIX) || this.usable(catalog, name, who) === undefined)
        unknown.push(name);
      else selected.push(name);
    }
    return { selected, unknown };
  }

  /** The best matches of `query` among the tools the caller may use. */
  search(query: string, limit: number, who: SearchCaller): SearchHit[] {
    const catalog = this.registry.current();
    if (catalog === undefined) return [];
    const started = performance.now();
    const hits = this.ranked(catalog, query, limit, who);
    this.metrics?.toolSearched((performance.now() - started) / 1000);
    return hits;
  }

  private ranked(
    catalog: CatalogSnapshot,
    query: string,
    limit: number,
    who: SearchCaller,
  ): SearchHit[] {
    const { index, tools } = this.indexOf(catalog);
    const hits = index.search(query, {
      filter: (r) => {
        const tool = tools[r.id as number];
        return tool !== undefined && this.offered(catalog, tool, who);
      },
    });
    return hits.slice(0, Math.min(Math.max(1, limit), MAX_RESULTS)).map((hit) => {
      const tool = tools[hit.id as number] as CatalogTool;
      const entry = JSON.parse(tool.publishedJson) as Record<string, unknown>;
      const title = typeof entry.title === 'string' ? entry.title : undefined;
      const description = firstLine(entry.description);
      return {
        name: tool.name,
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description }),
      };
    });
  }

  /** The published definitions of the named tools the caller may use, and the names it may not. */
  describe(
    names: readonly string[],
    who: SearchCaller,
  ): {
    readonly tools: readonly unknown[];
    readonly unknown: readonly string[];
    readonly held?: readonly string[];
  } {
    const catalog = this.registry.current();
    const tools: unknown[] = [];
    const unknown: string[] = [];
    const held: string[] = [];
    for (const name of names.slice(0, MAX_DESCRIBED)) {
      const tool = this.usable(catalog, name, who);
      if (tool !== undefined) tools.push(JSON.parse(tool.publishedJson));
      else if (this.heldFor(name, who.access)) held.push(name);
      else unknown.push(name);
    }
    return { tools, unknown, ...(held.length > 0 ? { held } : {}) };
  }

  /**
   * A tool of a pinned source held for review that the caller could use (docs/operations.md §6):
   * described as held, as a call of it answers, not as unknown.
   */
  private heldFor(name: string, access: CallerAccess | undefined): boolean {
    const held = this.registry.heldForReview(name);
    return held !== undefined && this.servers.mayUseUnlisted(access, held.sourceId, held.name);
  }

  /** A catalog tool the caller may use; undefined for any other name. */
  private usable(
    catalog: CatalogSnapshot | undefined,
    name: string,
    who: SearchCaller,
  ): CatalogTool | undefined {
    const tool = catalog?.get(name);
    return tool === undefined || !this.offered(catalog, tool, who) ? undefined : tool;
  }

  /** A catalog tool the caller may use on this path, and its client may be offered. */
  private offered(
    catalog: CatalogSnapshot | undefined,
    tool: CatalogTool,
    who: SearchCaller,
  ): boolean {
    return (
      (who.access === undefined || allowsTool(who.access, tool.sourceId, tool.name)) &&
      !isHiddenAppTool(catalog, tool, who.clientCapabilities)
    );
  }

  private indexOf(catalog: CatalogSnapshot): Indexed {
    const known = this.indexes.get(catalog);
    if (known !== undefined) return known;
    const index = new MiniSearch({
      fields: ['name', 'title', 'description', 'properties', 'tags'],
      tokenize: words,
      searchOptions: {
        // a query's words, bounded: the typo match's cost grows with the square of a word's
        // length, so an agent's (or an attacker's) text is cut to what a task is
        tokenize: queryWords,
        boost: { name: 2, title: 1.5, tags: 1.5 },
        // a prefix for words long enough to be one, a typo only in a long word: short words
        // matched loosely match everything
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => (term.length >= 7 ? 0.15 : false),
        maxFuzzy: 3,
        combineWith: 'OR',
      },
    });
    const tools = catalog.tools;
    index.addAll(
      tools.map((tool, id) => {
        const entry = JSON.parse(tool.publishedJson) as Record<string, unknown>;
        return {
          id,
          name: tool.name,
          title: typeof entry.title === 'string' ? entry.title : '',
          description:
            typeof entry.description === 'string'
              ? entry.description.trim().slice(0, INDEXED_DESCRIPTION_CHARS)
              : '',
          properties: propertyNames(entry.inputSchema).join(' '),
          tags: [...this.servers.tagsOf(tool)].join(' '),
        };
      }),
    );
    const indexed = { index, tools };
    this.indexes.set(catalog, indexed);
    return indexed;
  }
}
