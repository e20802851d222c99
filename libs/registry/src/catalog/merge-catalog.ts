import { TimeSlicer } from '../time-slicer';
import type { BundleDefinition } from '@app/config';
import type { PullErrorType } from '../manifest/manifest-errors';
import type { AcceptedManifest, ManifestTool } from '../manifest/manifest.types';
import type { CatalogTool, OutputValidator } from './catalog-tool';
import type { UpstreamContribution } from '../upstream/upstream-contribution';

export interface MergeInput {
  readonly bundle: BundleDefinition;
  readonly manifest: AcceptedManifest;
}

export interface MergeLimits {
  readonly maxToolsTotal: number;
  readonly maxToolTimeoutMillis: number;
}

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
 * Merges every enabled bundle's accepted manifest into one catalog, by contract §7:
 * 2. `_meta.enabled: false` tools are kept in the manifest but left out of the catalog;
 * 3. more than maxToolsTotal listed tools rejects the aggregate;
 * 4. sort by (bundleId, name);
 * 5. cap timeoutMillis at maxToolTimeoutMillis (absent means the cap);
 * 6. a name published by two bundles rejects the aggregate: no winner is picked, and the
 *    check runs after sorting so the outcome never depends on response order.
 * Rule 1 (names, per bundle) is validateManifest's. Pure: no I/O, no clock; it yields to the
 * event loop on large catalogs, and its result never depends on timing.
 * `outputValidatorOf` gives each listed tool the compiled validator of its outputSchema
 * (OutputValidators: compiled once per catalog, never per call).
 */
export async function mergeCatalog(
  inputs: readonly MergeInput[],
  limits: MergeLimits,
  slicer = new TimeSlicer(),
  outputValidatorOf: (tool: ManifestTool) => OutputValidator | undefined = () => undefined,
  upstreams: readonly UpstreamContribution[] = [],
): Promise<MergeResult> {
  // Sources in id order, each source's tools in name order: their concatenation is sorted by
  // (sourceId, name) without sorting thousands of entries at once (manifests arrive name-sorted
  // from validateManifest; a bundle that is not is sorted on its own; upstream contributions
  // are sorted when accepted).
  const perSource: { readonly id: string; readonly tools: readonly CatalogTool[] }[] = [];
  for (const { bundle, manifest } of inputs) {
    const own: CatalogTool[] = [];
    for (const tool of manifest.tools) {
      await slicer.maybeYield();
      if (!tool.enabled) continue;
      const validateOutput = outputValidatorOf(tool);
      own.push({
        name: tool.name,
        sourceId: bundle.id,
        route: { kind: 'bundle', bundle },
        timeoutMillis: Math.min(
          tool.timeoutMillis ?? limits.maxToolTimeoutMillis,
          limits.maxToolTimeoutMillis,
        ),
        version: tool.version,
        publishedJson: tool.publishedJson,
        fingerprint: tool.fingerprint,
        ...(validateOutput !== undefined ? { validateOutput } : {}),
        ...(tool.tags !== undefined ? { tags: tool.tags } : {}),
      });
    }
    if (
      !own.every(
        (t, i) => i === 0 || compareCodeUnits((own[i - 1] as CatalogTool).name, t.name) <= 0,
      )
    ) {
      own.sort((a, b) => compareCodeUnits(a.name, b.name));
    }
    perSource.push({ id: bundle.id, tools: own });
  }
  for (const contribution of upstreams)
    perSource.push({ id: contribution.upstream.id, tools: contribution.tools });
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
      detail: `tool names published by more than one ${upstreams.length === 0 ? 'bundle' : 'source'}: ${collisions.slice(0, 10).join(', ')}`,
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
