import type { CatalogTool } from '@app/registry';

/** How a bundle tool may run as a task: its manifest's `execution.taskSupport`, when not forbidden. */
export type TaskSupport = 'optional' | 'required';

const MARKER = '"taskSupport"';
const known = new WeakMap<CatalogTool, TaskSupport | null>();

/**
 * The `execution.taskSupport` a bundle tool's manifest gives it (contract §5 publishes it as
 * written; docs/operations.md §10 "Tasks"): `optional` or `required`; undefined for `forbidden`,
 * none, and every upstream tool (an upstream decides its own tasks). Read from the published
 * JSON once per catalog tool.
 */
export function bundleTaskSupport(tool: CatalogTool): TaskSupport | undefined {
  let support = known.get(tool);
  if (support === undefined) {
    if (tool.route.kind !== 'bundle' || !tool.publishedJson.includes(MARKER)) {
      known.set(tool, null);
      return undefined;
    }
    const execution = (JSON.parse(tool.publishedJson) as { execution?: { taskSupport?: unknown } })
      .execution;
    const value = execution?.taskSupport;
    support = value === 'optional' || value === 'required' ? value : null;
    known.set(tool, support);
  }
  return support ?? undefined;
}
