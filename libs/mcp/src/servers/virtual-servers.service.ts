import { Inject, Injectable, Logger } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig, type VirtualServerConfig } from '@app/config';
import { allowsTool, type CallerAccess } from '@app/identity';
import { RegistryService, type CatalogSnapshot, type CatalogTool } from '@app/registry';
import { MetaKey } from '@app/wire';

/** The path of a virtual server: `/mcp/servers/{id}`. */
const SERVER_PATH_PREFIX = '/mcp/servers/';

/** What a virtual server's view holds in one catalog: sources whole, and tools by name. */
export interface ServerView {
  readonly sources: ReadonlySet<string>;
  readonly tools: ReadonlySet<string>;
}

/** Who answers on a path: the gateway's serverInfo (or a virtual server's), written once. */
export interface ServedIdentity {
  readonly serverInfo: { readonly name: string; readonly version: string; readonly title?: string };
  /** `{"io.modelcontextprotocol/serverInfo":{…}}`: the `_meta` of every 2026 result. */
  readonly serverInfoMeta: string;
  readonly instructions?: string;
}

/** One virtual server as the status endpoint shows it. */
export interface VirtualServerStatus {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  readonly sources: readonly string[];
  readonly tools: readonly string[];
  readonly tags: readonly string[];
  /** Catalog tools its view holds now, and their names (the console's server picker). */
  readonly toolCount: number;
  readonly toolNames: readonly string[];
  /** `config` (mcp.virtualServers) or `admin` (registered at runtime, with its record's version). */
  readonly origin: 'config' | 'admin';
  readonly version?: number;
  readonly toolSearch: boolean;
  readonly toolSelect: boolean;
}

/**
 * A tool name pattern: `*` is any run of characters, everything else stands for itself. Matched
 * without a regular expression, in at most (pattern length × name length) steps: a pattern is an
 * operator's or a registration's text, and `*a*a*a…b` as a backtracking RegExp takes minutes.
 */
export class ToolPattern {
  constructor(private readonly pattern: string) {}

  test(name: string): boolean {
    const p = this.pattern;
    let pi = 0;
    let ni = 0;
    // where the last `*` was, and the name position it is matched up to
    let star = -1;
    let resume = 0;
    while (ni < name.length) {
      if (pi < p.length && p[pi] !== '*' && p[pi] === name[ni]) {
        pi++;
        ni++;
      } else if (pi < p.length && p[pi] === '*') {
        star = pi++;
        resume = ni;
      } else if (star >= 0) {
        pi = star + 1;
        ni = ++resume;
      } else return false;
    }
    while (pi < p.length && p[pi] === '*') pi++;
    return pi === p.length;
  }
}

function patternOf(pattern: string): ToolPattern {
  return new ToolPattern(pattern);
}

interface CompiledServer {
  readonly config: VirtualServerConfig;
  /** `config`: from `mcp.virtualServers`; `admin`: registered at runtime (version: its record's). */
  readonly origin: 'config' | 'admin';
  readonly version?: number;
  readonly sources: ReadonlySet<string>;
  readonly patterns: readonly ToolPattern[];
  readonly tags: ReadonlySet<string>;
  readonly identity: ServedIdentity;
}

/**
 * Virtual servers (docs/operations.md §16): named views of the catalog, each on
 * `/mcp/servers/{id}` with its own serverInfo and instructions. A view is resolved against each
 * published catalog once (sources whole; tools by published-name pattern or tag, from
 * `mcp.toolTags` and the tools' `_meta.tags`), and a request on a server's path runs with the
 * caller's grant narrowed to the view (`narrow`), so every method that honours `mcp.access`
 * (lists, calls, prompts, resources, capabilities, relays) honours the view the same way.
 */
@Injectable()
export class VirtualServers {
  private readonly servers = new Map<string, CompiledServer>();
  private readonly tagRules: readonly {
    readonly source: string;
    readonly match: ToolPattern;
    readonly tags: readonly string[];
  }[];
  private readonly gateway: ServedIdentity;
  private readonly identity: string;
  private readonly version: string;
  // replaced whenever the servers change (a registration): views are per catalog and server set
  private views = new WeakMap<CatalogSnapshot, Map<string, ServerView>>();
  private narrowed = new WeakMap<CatalogSnapshot, Map<string, CallerAccess>>();
  private readonly goneListeners: ((servers: ReadonlySet<string>) => void)[] = [];

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly registry: RegistryService,
  ) {
    const version = config.version;
    const serverInfo = { name: config.mcp.identity, version };
    this.gateway = {
      serverInfo,
      serverInfoMeta: JSON.stringify({ [MetaKey.serverInfo]: serverInfo }),
    };
    this.tagRules = config.mcp.toolTags.map((rule) => ({
      source: rule.source,
      match: patternOf(rule.tools),
      tags: rule.tags,
    }));
    // a source not configured may be registered later: accepted, and said once at boot
    const known = new Set([...config.bundles, ...config.upstreams].map((s) => s.id));
    const unknown = [
      ...config.mcp.virtualServers.flatMap((s) =>
        s.sources
          .filter((id) => !known.has(id))
          .map((id) => `mcp.virtualServers "${s.id}" names "${id}"`),
      ),
      ...config.mcp.toolTags
        .filter((t) => !known.has(t.source))
        .map((t) => `mcp.toolTags names "${t.source}"`),
    ];
    if (unknown.length > 0)
      new Logger('Mcp').warn(
        `${unknown.join('; ')}: no bundle or upstream is configured with that id (a registration may add one; docs/operations.md §16)`,
      );
    this.identity = config.mcp.identity;
    this.version = version;
    for (const server of config.mcp.virtualServers)
      this.servers.set(server.id, this.compile(server, 'config'));
  }

  /**
   * The servers registered at runtime (docs/operations.md §16 "Registered at runtime") are now
   * these, by id; a configured server's id is never replaced.
   */
  applyRegistered(
    registered: ReadonlyMap<string, { config: VirtualServerConfig; version: number }>,
  ): void {
    const gone = new Set<string>();
    for (const [id, server] of this.servers)
      if (server.origin === 'admin' && registered.get(id)?.version !== server.version) {
        this.servers.delete(id);
        gone.add(id);
      }
    for (const [id, { config, version }] of registered)
      if (!this.servers.has(id)) this.servers.set(id, this.compile(config, 'admin', version));
    this.views = new WeakMap();
    this.narrowed = new WeakMap();
    if (gone.size > 0) for (const listener of this.goneListeners) listener(gone);
  }

  /**
   * Tells `listener` the ids of registered servers deleted or replaced (a new version): what
   * was opened on their paths was granted by a view that is no more (NotificationHub closes
   * those streams). The listener must not throw.
   */
  onServersGone(listener: (servers: ReadonlySet<string>) => void): void {
    this.goneListeners.push(listener);
  }

  /** Whether `id` is a server of `mcp.virtualServers` (never replaced by a registration). */
  isConfigured(id: string): boolean {
    return this.servers.get(id)?.origin === 'config';
  }

  /** Every server id, configured and registered. */
  ids(): ReadonlySet<string> {
    return new Set(this.servers.keys());
  }

  private compile(
    server: VirtualServerConfig,
    origin: 'config' | 'admin',
    version?: number,
  ): CompiledServer {
    const info = {
      name: `${this.identity}/${server.id}`,
      title: server.title ?? server.id,
      version: this.version,
    };
    return {
      config: server,
      origin,
      ...(version === undefined ? {} : { version }),
      sources: new Set(server.sources),
      patterns: server.tools.map(patternOf),
      tags: new Set(server.tags),
      identity: {
        serverInfo: info,
        serverInfoMeta: JSON.stringify({ [MetaKey.serverInfo]: info }),
        ...(server.instructions === undefined ? {} : { instructions: server.instructions }),
      },
    };
  }

  /**
   * The virtual server a request path names: its id for `/mcp/servers/{id}` of a configured
   * server, null for `/mcp` itself, undefined for any other path (a 404).
   */
  serverOfPath(path: string): string | null | undefined {
    if (path === '/mcp') return null;
    if (!path.startsWith(SERVER_PATH_PREFIX)) return undefined;
    const id = path.slice(SERVER_PATH_PREFIX.length);
    return this.servers.has(id) ? id : undefined;
  }

  /** Whether any virtual server offers tool search (docs/operations.md §16 "Tool search"). */
  get anySearch(): boolean {
    return [...this.servers.values()].some((s) => s.config.toolSearch);
  }

  /** Whether this virtual server's path gives the search tools instead of its list. */
  searchOn(server: string): boolean {
    return this.servers.get(server)?.config.toolSearch === true;
  }

  /** Whether this virtual server's path also offers tool selection to 2025 sessions. */
  selectOn(server: string): boolean {
    const config = this.servers.get(server)?.config;
    return config?.toolSearch === true && config.toolSelect;
  }

  /** The serverInfo and instructions on a server's path (the gateway's own on `/mcp`). */
  identityOf(server: string | undefined): ServedIdentity {
    return (server === undefined ? undefined : this.servers.get(server)?.identity) ?? this.gateway;
  }

  /**
   * The caller's grant on a server's path: what it may use and the view holds (the plain grant
   * on `/mcp`). Built once per catalog, server and grant.
   */
  narrow(
    access: CallerAccess | undefined,
    server: string | undefined,
    catalog: CatalogSnapshot | undefined = this.registry.current(),
  ): CallerAccess | undefined {
    if (server === undefined) return access;
    const view = this.viewOf(server, catalog);
    const whole = access === undefined || access.all;
    // the server's own version in the key: lists built for a grant's key are cached per
    // catalog, and a registration changes a view without a new catalog. Not a count of changes
    // on this replica: the key is sealed into relay and bridge ids and compared when a stream
    // is rechecked, so it must read the same on every replica and whatever other servers did
    // (docs/security.md "Answers to relayed requests")
    const at = `@${server}#${this.servers.get(server)?.version ?? 'config'}`;
    // `*` for the whole view: a grant's key is its matching rules ("" when none match), which
    // must never name the whole view's cache entry
    const key = whole ? `*${at}` : `${access.key}${at}`;
    let byKey = catalog === undefined ? undefined : this.narrowed.get(catalog);
    const known = byKey?.get(key);
    if (known !== undefined) return known;
    let narrowed: CallerAccess;
    if (whole) {
      narrowed = {
        all: false,
        key,
        sources: view.sources,
        tools: view.tools,
        server,
        resolvedFor: catalog,
      };
    } else {
      const sources = new Set([...view.sources].filter((s) => access.sources.has(s)));
      const tools = new Set<string>();
      for (const tool of catalog?.tools ?? []) {
        if (sources.has(tool.sourceId)) continue;
        if (
          allowsTool(access, tool.sourceId, tool.name) &&
          (view.sources.has(tool.sourceId) || view.tools.has(tool.name))
        )
          tools.add(tool.name);
      }
      narrowed = { all: false, key, sources, tools, server, granted: access, resolvedFor: catalog };
    }
    if (catalog !== undefined) {
      byKey ??= new Map();
      this.narrowed.set(catalog, byKey);
      byKey.set(key, narrowed);
    }
    return narrowed;
  }

  /**
   * A grant narrowed to a server's view (a stream's, resolved against the catalog of its
   * opening) resolved again against `catalog`: the view's tools by tag or name pattern are
   * that catalog's. Any other grant as it is.
   */
  narrowFor(
    access: CallerAccess | undefined,
    catalog: CatalogSnapshot | undefined,
  ): CallerAccess | undefined {
    if (access === undefined || access.all || access.server === undefined) return access;
    if (access.resolvedFor === catalog) return access;
    return this.narrow(access.granted, access.server, catalog);
  }

  /**
   * Whether the caller may use a tool that is in no catalog now (one held for review,
   * docs/operations.md §6) on the path its grant was narrowed to: granted, and in the server's
   * view by its source or a name pattern (its tags are not known until it is published).
   */
  mayUseUnlisted(access: CallerAccess | undefined, sourceId: string, name: string): boolean {
    if (access === undefined || access.all) return true;
    if (access.server === undefined) return allowsTool(access, sourceId, name);
    const compiled = this.servers.get(access.server);
    const inView =
      compiled !== undefined &&
      (compiled.sources.has(sourceId) || compiled.patterns.some((p) => p.test(name)));
    return inView && (access.granted === undefined || allowsTool(access.granted, sourceId, name));
  }

  /** The virtual server a grant was narrowed to (undefined: the whole catalog's grant). */
  static serverOf(access: CallerAccess | undefined): string | undefined {
    return access === undefined || access.all ? undefined : access.server;
  }

  /** Every virtual server, with what its view holds in the catalog served now. */
  statuses(): VirtualServerStatus[] {
    const catalog = this.registry.current();
    return [...this.servers.values()].map(({ config, origin, version }) => {
      const view = this.viewOf(config.id, catalog);
      const toolNames = (catalog?.tools ?? [])
        .filter((t) => view.sources.has(t.sourceId) || view.tools.has(t.name))
        .map((t) => t.name);
      return {
        id: config.id,
        title: config.title ?? config.id,
        path: `${SERVER_PATH_PREFIX}${config.id}`,
        sources: config.sources,
        tools: config.tools,
        tags: config.tags,
        toolCount: toolNames.length,
        toolNames,
        origin,
        ...(version === undefined ? {} : { version }),
        toolSearch: config.toolSearch,
        toolSelect: config.toolSelect,
      };
    });
  }

  /** The tags of a catalog tool: its own `_meta.tags` and those `mcp.toolTags` gives it. */
  tagsOf(tool: CatalogTool): ReadonlySet<string> {
    const tags = new Set(tool.tags ?? []);
    for (const rule of this.tagRules)
      if (rule.source === tool.sourceId && rule.match.test(tool.name))
        for (const tag of rule.tags) tags.add(tag);
    return tags;
  }

  private viewOf(server: string, catalog: CatalogSnapshot | undefined): ServerView {
    const compiled = this.servers.get(server);
    if (compiled === undefined) return { sources: new Set(), tools: new Set() };
    let byServer = catalog === undefined ? undefined : this.views.get(catalog);
    const known = byServer?.get(server);
    if (known !== undefined) return known;
    const tools = new Set<string>();
    for (const tool of catalog?.tools ?? []) {
      if (compiled.sources.has(tool.sourceId)) continue;
      if (compiled.patterns.some((p) => p.test(tool.name))) {
        tools.add(tool.name);
        continue;
      }
      if (compiled.tags.size > 0) {
        for (const tag of this.tagsOf(tool))
          if (compiled.tags.has(tag)) {
            tools.add(tool.name);
            break;
          }
      }
    }
    const view: ServerView = { sources: compiled.sources, tools };
    if (catalog !== undefined) {
      byServer ??= new Map();
      this.views.set(catalog, byServer);
      byServer.set(server, view);
    }
    return view;
  }
}
