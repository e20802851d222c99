import type { BundleDefinition } from '@app/config';
import type { AcceptedManifest, ManifestTool } from '../manifest/manifest.types';
import type { CatalogTool, OutputValidator } from '../catalog/catalog-tool';
import { compareCodeUnits } from '../catalog/merge-catalog';
import type { MergeLimits, SourceContribution } from '../catalog/source-contribution';
import type { TimeSlicer } from '../time-slicer';

/**
 * A bundle's accepted manifest as the catalog takes it (contract §7). `outputValidatorOf` gives
 * each listed tool the compiled validator of its outputSchema (OutputValidators: compiled once
 * per catalog, never per call).
 */
export function bundleContribution(
  bundle: BundleDefinition,
  manifest: AcceptedManifest,
  outputValidatorOf: (tool: ManifestTool) => OutputValidator | undefined = () => undefined,
): SourceContribution {
  return {
    kind: 'bundle',
    id: bundle.id,
    fingerprint: manifest.fingerprint,
    revision: manifest.revision ?? null,
    entries: (limits, slicer) => bundleEntries(bundle, manifest, limits, slicer, outputValidatorOf),
  };
}

/**
 * The bundle's catalog entries, by contract §7: `_meta.enabled: false` tools are kept in the
 * manifest but not listed (rule 2); timeoutMillis is capped at maxToolTimeoutMillis, absent
 * means the cap (rule 5); sorted by name (rule 4: manifests arrive name-sorted from
 * validateManifest, a bundle's that is not is sorted on its own). The route is the config's
 * (contract §1). Yields to the event loop on large manifests.
 */
async function bundleEntries(
  bundle: BundleDefinition,
  manifest: AcceptedManifest,
  limits: MergeLimits,
  slicer: TimeSlicer,
  outputValidatorOf: (tool: ManifestTool) => OutputValidator | undefined,
): Promise<CatalogTool[]> {
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
    !own.every((t, i) => i === 0 || compareCodeUnits((own[i - 1] as CatalogTool).name, t.name) <= 0)
  )
    own.sort((a, b) => compareCodeUnits(a.name, b.name));
  return own;
}
