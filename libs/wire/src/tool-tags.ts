/**
 * Tool tags (docs/operations.md §16 "Tags"): a tool's `_meta.tags` in a manifest or an upstream's
 * list, and `mcp.toolTags` in config, by which virtual servers select tools. Lower-case words
 * joined by `-`, `_`, `.` or `:`; at most MAX_TOOL_TAGS per tool.
 */
export const TAG_PATTERN = /^[a-z0-9][a-z0-9._:-]{0,63}$/;
export const MAX_TOOL_TAGS = 32;

/** The tags of a `_meta.tags` value, sorted and unique; undefined when it is not a list of tags. */
export function toolTagsOf(value: unknown): readonly string[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_TOOL_TAGS) return undefined;
  if (!value.every((t) => typeof t === 'string' && TAG_PATTERN.test(t))) return undefined;
  return [...new Set(value as string[])].sort();
}

/**
 * The name prefix of the gateway's own tools (the search tools, docs/operations.md §16 "Tool
 * search"); no source's namePrefix may start it or start with it.
 */
export const GATEWAY_TOOL_PREFIX = 'gateway__';
