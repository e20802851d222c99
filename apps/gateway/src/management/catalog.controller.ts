import { Controller, Get } from '@nestjs/common';
import {
  RegistryService,
  type CatalogHistoryView,
  type CatalogSnapshot,
  type CatalogTool,
} from '@app/registry';

/** One published tool as the console's Tools view shows it: the tools/list entry and its source. */
export interface CatalogToolView {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
  /** Which source publishes it: a Tool Service bundle or an upstream MCP server (by id). */
  readonly source: { readonly kind: 'bundle' | 'upstream'; readonly id: string };
}

/** What GET /actuator/catalog/tools returns; `publishedAt` null while no catalog is published. */
export interface CatalogToolsView {
  readonly publishedAt: string | null;
  readonly tools: readonly CatalogToolView[];
}

interface PublishedEntry {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
}

function toolView(tool: CatalogTool): CatalogToolView {
  // publishedJson is the tools/list entry the gateway serialized itself: an object, never `_meta`.
  const entry = JSON.parse(tool.publishedJson) as PublishedEntry;
  return {
    name: tool.name,
    ...(entry.title !== undefined ? { title: entry.title } : {}),
    ...(entry.description !== undefined ? { description: entry.description } : {}),
    inputSchema: entry.inputSchema,
    ...(entry.outputSchema !== undefined ? { outputSchema: entry.outputSchema } : {}),
    ...(entry.annotations !== undefined ? { annotations: entry.annotations } : {}),
    source: { kind: tool.route.kind, id: tool.sourceId },
  };
}

/**
 * The published catalog for operators (docs/console.md "Endpoints it adds"), management port only:
 * GET /actuator/catalog/tools (every listed tool with its schemas and source, in catalog order)
 * and GET /actuator/catalog/history (the last publications and rejections, newest first).
 */
@Controller('actuator/catalog')
export class CatalogController {
  /** The tools view of the last snapshot asked for: parsed once per catalog, not per poll. */
  private cached?: { readonly snapshot: CatalogSnapshot; readonly view: CatalogToolsView };

  constructor(private readonly registry: RegistryService) {}

  @Get('tools')
  tools(): CatalogToolsView {
    const snapshot = this.registry.current();
    if (snapshot === undefined) return { publishedAt: null, tools: [] };
    if (this.cached?.snapshot !== snapshot) {
      this.cached = {
        snapshot,
        view: {
          publishedAt: snapshot.publishedAt.toISOString(),
          tools: snapshot.tools.map(toolView),
        },
      };
    }
    return this.cached.view;
  }

  @Get('history')
  history(): CatalogHistoryView {
    return this.registry.history();
  }
}
