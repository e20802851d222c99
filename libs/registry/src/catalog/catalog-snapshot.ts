import { TimeSlicer } from '../time-slicer';
import type { CatalogTool } from './catalog-tool';

/**
 * One published catalog: immutable, swapped whole (readers never see a half-built one).
 * `toolsJson` is the tools/list `tools` array serialized once per snapshot, so tools/list
 * costs no serialization on the request path (DESIGN "The request path stays lean").
 */
export class CatalogSnapshot {
  private constructor(
    readonly tools: readonly CatalogTool[],
    private readonly byName: ReadonlyMap<string, CatalogTool>,
    /** Per tool, the JSON of its published entry plus version and timeout: the diff key. */
    readonly entryJsonByName: ReadonlyMap<string, string>,
    readonly toolsJson: string,
    /** Identifies the content: equal keys mean equal catalogs. */
    readonly contentKey: string,
    readonly publishedAt: Date,
    /** The manifest revision each source contributed (null: the manifest had none). */
    readonly revisions: Readonly<Record<string, string | null>>,
  ) {}

  get toolCount(): number {
    return this.tools.length;
  }

  /** The listed tool with this published name, or undefined. */
  get(name: string): CatalogTool | undefined {
    return this.byName.get(name);
  }

  /** Builds a snapshot from merged, sorted tools, yielding to the event loop on large catalogs. */
  static async build(
    tools: readonly CatalogTool[],
    contentKey: string,
    publishedAt: Date,
    revisions: Readonly<Record<string, string | null>> = {},
  ): Promise<CatalogSnapshot> {
    const slicer = new TimeSlicer();
    const byName = new Map<string, CatalogTool>();
    const entryJsonByName = new Map<string, string>();
    const parts: string[] = [];
    for (const tool of tools) {
      await slicer.maybeYield();
      const json = JSON.stringify(tool.published);
      parts.push(json);
      byName.set(tool.name, tool);
      entryJsonByName.set(tool.name, `${json}\u0000${tool.version}\u0000${tool.timeoutMillis}`);
    }
    return new CatalogSnapshot(
      tools,
      byName,
      entryJsonByName,
      `[${parts.join(',')}]`,
      contentKey,
      publishedAt,
      revisions,
    );
  }
}

/** What changed between two catalogs, for the catalog-change log line. */
export interface CatalogDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export function diffCatalogs(
  previous: CatalogSnapshot | undefined,
  next: CatalogSnapshot,
): CatalogDiff {
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [name, entry] of next.entryJsonByName) {
    const before = previous?.entryJsonByName.get(name);
    if (before === undefined) added.push(name);
    else if (before !== entry) changed.push(name);
  }
  if (previous) {
    for (const name of previous.entryJsonByName.keys())
      if (!next.entryJsonByName.has(name)) removed.push(name);
  }
  return { added, removed, changed };
}
