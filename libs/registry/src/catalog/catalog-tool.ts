import type { BundleDefinition, UpstreamDefinition } from '@app/config';

/** Where a call for a catalog tool goes. Only configuration supplies it (contract §1). */
export interface BundleRoute {
  readonly kind: 'bundle';
  readonly bundle: BundleDefinition;
}

/**
 * A tool of an upstream MCP server: called there by its original name
 * (docs/operations.md §10 "Names", "Routing").
 */
export interface UpstreamRoute {
  readonly kind: 'upstream';
  readonly upstream: UpstreamDefinition;
  /** The name the upstream listed; the published name is never parsed to find it. */
  readonly originalName: string;
}

export type ToolRoute = BundleRoute | UpstreamRoute;

/**
 * Checks a tool's structured answer against its outputSchema, compiled once per catalog:
 * undefined when it conforms, otherwise ajv's reason (`structuredContent/total must be
 * number`). Libs that apply it declare the same function type (execution imports no registry).
 */
export type OutputValidator = (value: unknown) => string | undefined;

/** One callable, listed tool of a published catalog. */
export interface CatalogTool {
  /** The published name: the tools/call key and, for bundles, the path of the call (contract §10). */
  readonly name: string;
  readonly sourceId: string;
  readonly route: ToolRoute;
  /** Effective timeout in ms: `_meta.timeoutMillis` capped by maxToolTimeoutMillis, which is also the default (§7.5). */
  readonly timeoutMillis: number;
  readonly version: string;
  /** The tools/list entry as JSON text (contract §5: exactly as published, never `_meta`). */
  readonly publishedJson: string;
  /** The manifest tool's fingerprint: with timeoutMillis, the catalog diff key. */
  readonly fingerprint: string;
  /** Present when the tool declares an outputSchema: its compiled validator (MCP 2025-11-25 tools). */
  readonly validateOutput?: OutputValidator;
  /** Its `_meta.tags` (a manifest's, or an upstream's list): virtual servers select by them (docs/operations.md §16). */
  readonly tags?: readonly string[];
  /**
   * The `ui://` resources an upstream tool's MCP Apps view is read from (`_meta.ui.resourceUri`,
   * and the extension's earlier flat key `_meta["ui/resourceUri"]`): published only while
   * `resources/read` routes each to the tool's own upstream (catalog/own-views.ts).
   */
  readonly viewUris?: readonly string[];
}

/** A catalog tool served by a bundle's Tool Service. */
export type BundleTool = CatalogTool & { readonly route: BundleRoute };
/** A catalog tool served by an upstream MCP server. */
export type UpstreamTool = CatalogTool & { readonly route: UpstreamRoute };
