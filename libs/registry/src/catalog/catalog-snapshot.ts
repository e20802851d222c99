import { constants as zlibConstants, deflateRaw } from 'node:zlib';
import { promisify } from 'node:util';
import { TimeSlicer } from '../time-slicer';

/**
 * A `tools` array this large or larger also gets a compressed copy
 * (docs/operations.md §2 "Compressed lists").
 */
export const DEFLATE_MIN_BYTES = 64 * 1024;

const deflateRawAsync = promisify(deflateRaw);

/**
 * Raw DEFLATE blocks of `bytes` that end on a byte boundary without a final block (a sync
 * flush), so they can be spliced between other blocks of one gzip member. zlib runs on the
 * libuv thread pool: the event loop only waits for it.
 */
function deflateForSplicing(bytes: Buffer): Promise<Buffer> {
  return deflateRawAsync(bytes, { level: 6, finishFlush: zlibConstants.Z_SYNC_FLUSH });
}
import { CatalogExtras } from './catalog-extras';
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
    /** The tools/list `tools` array as UTF-8 bytes, serialized once per snapshot. */
    readonly toolsJsonBytes: Buffer,
    /** Identifies the content: equal keys mean equal catalogs. */
    readonly contentKey: string,
    readonly publishedAt: Date,
    /** The manifest revision each source contributed (null: the manifest had none). */
    readonly revisions: Readonly<Record<string, string | null>>,
    /**
     * `toolsJsonBytes` as raw DEFLATE blocks ending in a sync flush (no final block), built once
     * per snapshot for lists of DEFLATE_MIN_BYTES or more; undefined for smaller ones.
     */
    readonly toolsJsonDeflated?: Buffer,
    /**
     * Prompts, resources and templates of upstream MCP servers, with their routes
     * (docs/operations.md §10).
     */
    readonly extras: CatalogExtras = CatalogExtras.EMPTY,
  ) {}

  get toolCount(): number {
    return this.tools.length;
  }

  /** The `tools` array as text (diagnostics and tests; tools/list writes the bytes). */
  get toolsJson(): string {
    return this.toolsJsonBytes.toString('utf8');
  }

  /** The listed tool with this published name, or undefined. */
  get(name: string): CatalogTool | undefined {
    return this.byName.get(name);
  }

  /** The diff key of a tool: what it publishes, its version and effective timeout. */
  entryKeyOf(name: string): string | undefined {
    const tool = this.byName.get(name);
    return tool === undefined ? undefined : `${tool.fingerprint}:${tool.timeoutMillis}`;
  }

  /** Builds a snapshot from merged, sorted tools, yielding to the event loop on large catalogs. */
  static async build(
    tools: readonly CatalogTool[],
    contentKey: string,
    publishedAt: Date,
    revisions: Readonly<Record<string, string | null>> = {},
    extras: CatalogExtras = CatalogExtras.EMPTY,
  ): Promise<CatalogSnapshot> {
    const slicer = new TimeSlicer();
    const byName = new Map<string, CatalogTool>();
    let length = 2 + Math.max(0, tools.length - 1);
    for (const tool of tools) {
      await slicer.maybeYield();
      length += Buffer.byteLength(tool.publishedJson, 'utf8');
      byName.set(tool.name, tool);
    }
    // One buffer, written tool by tool in slices: no joined string, no second copy.
    const out = Buffer.allocUnsafeSlow(length);
    let at = out.write('[', 0, 'latin1');
    for (let i = 0; i < tools.length; i++) {
      await slicer.maybeYield();
      if (i > 0) at += out.write(',', at, 'latin1');
      at += out.write((tools[i] as CatalogTool).publishedJson, at, 'utf8');
    }
    out.write(']', at, 'latin1');
    const deflated = length >= DEFLATE_MIN_BYTES ? await deflateForSplicing(out) : undefined;
    return new CatalogSnapshot(
      tools,
      byName,
      out,
      contentKey,
      publishedAt,
      revisions,
      deflated,
      extras,
    );
  }
}

/** What changed between two catalogs, for the catalog-change log line. */
export interface CatalogDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export async function diffCatalogs(
  previous: CatalogSnapshot | undefined,
  next: CatalogSnapshot,
  slicer = new TimeSlicer(),
): Promise<CatalogDiff> {
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const tool of next.tools) {
    await slicer.maybeYield();
    const before = previous?.entryKeyOf(tool.name);
    if (before === undefined) added.push(tool.name);
    else if (before !== next.entryKeyOf(tool.name)) changed.push(tool.name);
  }
  if (previous) {
    for (const tool of previous.tools)
      if (next.get(tool.name) === undefined) removed.push(tool.name);
  }
  return { added, removed, changed };
}
