import { TimeSlicer } from '../time-slicer';
import type { PullErrorType } from '../manifest/manifest-errors';
import type { CatalogTool } from './catalog-tool';
import type { MergeLimits, SourceContribution } from './source-contribution';

export type { MergeLimits } from './source-contribution';

export type MergeResult =
  | { readonly ok: true; readonly tools: readonly CatalogTool[] }
  | {
      readonly ok: false;
      readonly errorType: Extract<PullErrorType, 'ToolNameCollisionError' | 'CatalogTooLargeError'>;
      readonly detail: string;
      /** Sources (bundle or upstream ids) that take part in the rejection (all of them for the total limit). */
      readonly bundleIds: readonly string[];
    };

/** Code-unit order, the same on every replica and locale (DESIGN "Determinism"). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Merges every source's contribution into one catalog, by contract §7 (rules 2 and 5, what a
 * bundle lists and its timeouts, are its contribution's: bundle/bundle-contribution.ts):
 * 3. more than maxToolsTotal listed tools rejects the aggregate;
 * 4. sort by (sourceId, name);
 * 6. a name published by two sources rejects the aggregate: no winner is picked, and the
 *    check runs after sorting so the outcome never depends on response order.
 * Rule 1 (names, per bundle) is validateManifest's. Pure: no I/O, no clock; it yields to the
 * event loop on large catalogs, and its result never depends on timing.
 */
export async function mergeCatalog(
  contributions: readonly SourceContribution[],
  limits: MergeLimits,
  slicer = new TimeSlicer(),
): Promise<MergeResult> {
  // Sources in id order, each source's tools in name order: their concatenation is sorted by
  // (sourceId, name) without sorting thousands of entries at once.
  const perSource: { readonly id: string; readonly tools: readonly CatalogTool[] }[] = [];
  for (const contribution of contributions)
    perSource.push({ id: contribution.id, tools: await contribution.entries(limits, slicer) });
  perSource.sort((a, b) => compareCodeUnits(a.id, b.id));
  const tools: CatalogTool[] = [];
  for (const source of perSource) for (const t of source.tools) tools.push(t);
  if (tools.length > limits.maxToolsTotal) {
    return {
      ok: false,
      errorType: 'CatalogTooLargeError',
      detail: `${tools.length} listed tools exceed maxToolsTotal ${limits.maxToolsTotal}`,
      bundleIds: perSource.map((source) => source.id),
    };
  }

  const { collisions, involved } = await collisionsOf(tools, slicer);
  if (collisions.length > 0) {
    return {
      ok: false,
      errorType: 'ToolNameCollisionError',
      detail: `tool names published by more than one ${contributions.every((c) => c.kind === 'bundle') ? 'bundle' : 'source'}: ${collisions.slice(0, 10).join(', ')}`,
      bundleIds: [...involved].sort(compareCodeUnits),
    };
  }
  return { ok: true, tools };
}

/**
 * The names in a (sourceId, name)-sorted tool list that more than one source publishes, as
 * `"name" (first, second)`, and every source involved (contract §7.6). Shared by the catalog
 * merge and the live lists' merge (docs/operations.md §11 "Live lists").
 */
export async function collisionsOf(
  tools: readonly CatalogTool[],
  slicer = new TimeSlicer(),
): Promise<{ readonly collisions: readonly string[]; readonly involved: ReadonlySet<string> }> {
  const ownerByName = new Map<string, string>();
  const collisions: string[] = [];
  const involved = new Set<string>();
  for (const tool of tools) {
    await slicer.maybeYield();
    const owner = ownerByName.get(tool.name);
    if (owner === undefined) {
      ownerByName.set(tool.name, tool.sourceId);
    } else if (owner !== tool.sourceId) {
      collisions.push(`"${tool.name}" (${owner}, ${tool.sourceId})`);
      involved.add(owner).add(tool.sourceId);
    }
  }
  return { collisions, involved };
}
