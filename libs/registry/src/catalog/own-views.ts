import type { CatalogExtras } from './catalog-extras';
import type { CatalogTool } from './catalog-tool';

/**
 * An upstream tool whose MCP Apps view names a `ui://` resource that `resources/read` routes to
 * another source (docs/operations.md §10 "Extensions"): a host would render that source's app
 * with this tool's results, so the tool is not published.
 */
export interface ViewConflict {
  /** The upstream that lists the tool. */
  readonly upstreamId: string;
  /** The tool's published name. */
  readonly tool: string;
  readonly resourceUri: string;
  /** The source `resources/read` of the URI goes to. */
  readonly servedBy: string;
}

/**
 * The tools whose views are their own upstream's (every `viewUris` entry routes to it, or to no
 * source at all, where a read finds nothing to show), and the conflicts of those left out. The
 * same array when none is left out: a catalog without such tools pays one pass.
 */
export function withOwnViews(
  tools: readonly CatalogTool[],
  extras: CatalogExtras,
): { readonly tools: readonly CatalogTool[]; readonly conflicts: readonly ViewConflict[] } {
  let conflicts: ViewConflict[] | undefined;
  for (const tool of tools) {
    if (tool.viewUris === undefined || tool.route.kind !== 'upstream') continue;
    const upstreamId = tool.route.upstream.id;
    for (const resourceUri of tool.viewUris) {
      const servedBy = extras.resourceOwner(resourceUri)?.id;
      if (servedBy === undefined || servedBy === upstreamId) continue;
      (conflicts ??= []).push({ upstreamId, tool: tool.name, resourceUri, servedBy });
      break;
    }
  }
  if (conflicts === undefined) return { tools, conflicts: [] };
  const out = new Set(conflicts.map((c) => c.tool));
  return { tools: tools.filter((t) => !out.has(t.name)), conflicts };
}

/** Whether every view of the tool is its own upstream's (or no source's): `withOwnViews` for one tool. */
export function ownsItsViews(tool: CatalogTool, extras: CatalogExtras): boolean {
  return tool.viewUris === undefined || withOwnViews([tool], extras).conflicts.length === 0;
}
