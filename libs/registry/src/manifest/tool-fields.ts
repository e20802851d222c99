import type { PublishedTool } from './manifest.types';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** MCP 2025-11-25 ToolAnnotations: hints only, typed when present. */
const ANNOTATION_BOOLEANS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
const ICON_THEMES = new Set(['light', 'dark']);
const TASK_SUPPORT = new Set(['forbidden', 'optional', 'required']);

function annotationProblems(value: unknown): string[] {
  if (!isRecord(value)) return ['annotations must be an object when present'];
  const problems: string[] = [];
  if (value.title !== undefined && typeof value.title !== 'string') {
    problems.push('annotations.title must be a string when present');
  }
  for (const hint of ANNOTATION_BOOLEANS) {
    if (value[hint] !== undefined && typeof value[hint] !== 'boolean') {
      problems.push(`annotations.${hint} must be true or false when present`);
    }
  }
  return problems;
}

function iconProblems(value: unknown): string[] {
  if (!Array.isArray(value)) return ['icons must be an array when present'];
  const problems: string[] = [];
  value.forEach((icon: unknown, i) => {
    const at = `icons[${i}]`;
    if (!isRecord(icon)) {
      problems.push(`${at} must be an object`);
      return;
    }
    if (typeof icon.src !== 'string' || icon.src === '') {
      problems.push(`${at}.src must be a non-empty string (a URI)`);
    }
    if (icon.mimeType !== undefined && typeof icon.mimeType !== 'string') {
      problems.push(`${at}.mimeType must be a string when present`);
    }
    if (
      icon.sizes !== undefined &&
      !(Array.isArray(icon.sizes) && icon.sizes.every((s) => typeof s === 'string'))
    ) {
      problems.push(`${at}.sizes must be an array of strings when present`);
    }
    if (icon.theme !== undefined && !ICON_THEMES.has(icon.theme as string)) {
      problems.push(`${at}.theme must be "light" or "dark" when present`);
    }
  });
  return problems;
}

function executionProblems(value: unknown): string[] {
  if (!isRecord(value)) return ['execution must be an object when present'];
  if (value.taskSupport !== undefined && !TASK_SUPPORT.has(value.taskSupport as string)) {
    return ['execution.taskSupport must be "forbidden", "optional" or "required" when present'];
  }
  return [];
}

/**
 * The type rules of the optional MCP 2025-11-25 Tool fields (`title`, `annotations`, `icons`,
 * `execution`), as rule texts without the tool label. Known members are typed; members the
 * spec does not name inside these objects are allowed and published as they are.
 */
export function optionalFieldProblems(raw: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (raw.title !== undefined && typeof raw.title !== 'string') {
    problems.push('title must be a string when present');
  }
  if (raw.annotations !== undefined) problems.push(...annotationProblems(raw.annotations));
  if (raw.icons !== undefined) problems.push(...iconProblems(raw.icons));
  if (raw.execution !== undefined) problems.push(...executionProblems(raw.execution));
  return problems;
}

/**
 * The tools/list entry of a tool that passed validation: every field of the MCP 2025-11-25
 * Tool, with its value as the manifest published it, in a fixed order (name, title,
 * description, inputSchema, outputSchema, annotations, icons, execution). `_meta` stays
 * private (contract §5), and so does any top-level field the Tool type does not define:
 * the contract lists what is published, and a manifest cannot add to the public surface.
 */
export function publishedEntry(raw: Readonly<Record<string, unknown>>): PublishedTool {
  return {
    name: raw.name as string,
    ...(raw.title !== undefined ? { title: raw.title as string } : {}),
    description: raw.description as string,
    inputSchema: raw.inputSchema as Record<string, unknown>,
    ...(raw.outputSchema !== undefined
      ? { outputSchema: raw.outputSchema as Record<string, unknown> }
      : {}),
    ...(raw.annotations !== undefined
      ? { annotations: raw.annotations as Record<string, unknown> }
      : {}),
    ...(raw.icons !== undefined
      ? { icons: raw.icons as ReadonlyArray<Record<string, unknown>> }
      : {}),
    ...(raw.execution !== undefined ? { execution: raw.execution as Record<string, unknown> } : {}),
  };
}
