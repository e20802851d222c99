/**
 * A tool as published on tools/list: every field of the MCP 2025-11-25 Tool, exactly as the
 * manifest gave it, never `_meta` (contract §5).
 */
export interface PublishedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** `[{src, mimeType?, sizes?, theme?}]` (2025-11-25). */
  readonly icons?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /** `{taskSupport?: "forbidden" | "optional" | "required"}` (2025-11-25). */
  readonly execution?: Readonly<Record<string, unknown>>;
}

/**
 * A manifest tool that passed validation (contract §5). Its tools/list entry is kept as JSON
 * text, not as objects: a 10,000-tool catalog of schema objects would cost several times the
 * memory, and tools/list serves the text anyway.
 */
export interface ManifestTool {
  readonly name: string;
  /** The tools/list entry: every MCP Tool field as published (see PublishedTool); never `_meta`. */
  readonly publishedJson: string;
  /** Equal fingerprints mean an unchanged tool (entry, version, timeout, enabled). */
  readonly fingerprint: string;
  /** `_meta.version`. */
  readonly version: string;
  /** `_meta.timeoutMillis` as declared (a positive integer), before the maxToolTimeoutMillis cap. */
  readonly timeoutMillis?: number;
  /** `_meta.enabled`, default true; false = kept but neither listed nor callable (contract §7.2). */
  readonly enabled: boolean;
  /** `_meta.tags`, sorted and unique: the gateway's grouping (docs/operations.md §16), never published. */
  readonly tags?: readonly string[];
}

/** A whole manifest that passed validation; the unit of last-good (contract §6, §11). */
export interface AcceptedManifest {
  readonly bundleId: string;
  readonly revision?: string;
  /** Every tool of the manifest in name order (code units), disabled ones included. */
  readonly tools: readonly ManifestTool[];
  /** Fingerprint of the manifest's content: equal fingerprints mean nothing changed. */
  readonly fingerprint: string;
}

/** The published entry of a tool as an object (for tests and diagnostics; the hot path never parses it). */
export function publishedToolOf(tool: { readonly publishedJson: string }): PublishedTool {
  return JSON.parse(tool.publishedJson) as PublishedTool;
}
