import { TAG_PATTERN } from '@app/wire';
import {
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from './class-validator';

/** A virtual server's id: its path `/mcp/servers/{id}` (lower case, digits and `-`). */
export const VIRTUAL_SERVER_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/**
 * A tool name pattern: the published-name alphabet (contract §5) and `*` for any run of
 * characters, e.g. `processing.*` or `*__search`.
 */
export const TOOL_PATTERN = /^[A-Za-z0-9_./*-]{1,128}$/;

/**
 * One virtual server under `mcp.virtualServers[]` (docs/operations.md §16 "Virtual servers"): a
 * named view of the catalog served on its own path, `/mcp/servers/{id}`, with its own
 * serverInfo, title and instructions. A tool is in the view when its source is listed in
 * `sources`, its published name matches one of `tools`, or it carries one of `tags`; a caller
 * sees the intersection of the view and its own grant (`mcp.access`).
 */
export class VirtualServerConfig {
  @IsString({ message: 'is required: the path segment of /mcp/servers/{id}' })
  @Matches(VIRTUAL_SERVER_ID_PATTERN, { message: 'must match [a-z0-9][a-z0-9-]{0,62}' })
  id!: string;

  /** serverInfo.title; absent: the id. */
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MinLength(1, { message: 'must not be empty' })
  @MaxLength(200, { message: 'must be at most 200 characters' })
  title?: string;

  /** The `instructions` of initialize and server/discover for this server. */
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(8192, { message: 'must be at most 8192 characters' })
  instructions?: string;

  /** Bundle or upstream ids whose every tool, prompt and resource is in the view. */
  @IsArray({ message: 'must be a list of source ids' })
  @IsString({ each: true, message: 'each entry must be a source id' })
  sources: string[] = [];

  /** Published tool names or patterns (`*`: any run of characters). */
  @IsArray({ message: 'must be a list of tool names or patterns' })
  @Matches(TOOL_PATTERN, {
    each: true,
    message: 'each entry must be a tool name or a pattern of [A-Za-z0-9_./-] and *',
  })
  tools: string[] = [];

  /**
   * true: `tools/list` on its path gives the gateway's search tools instead of the view's tools
   * (docs/operations.md §16 "Tool search").
   */
  @IsBoolean({ message: 'must be true or false' })
  toolSearch = false;

  /**
   * true (with `toolSearch`): a 2025 session on its path is also given `gateway__select_tools`,
   * which makes its `tools/list` the tools it names (docs/operations.md §16 "Tool selection").
   */
  @IsBoolean({ message: 'must be true or false' })
  toolSelect = false;

  /** Tags (from `mcp.toolTags` or a tool's `_meta.tags`) whose tools are in the view. */
  @IsArray({ message: 'must be a list of tags' })
  @Matches(TAG_PATTERN, { each: true, message: 'each entry must match [a-z0-9][a-z0-9._:-]{0,63}' })
  tags: string[] = [];
}

/**
 * Tags given to tools in config (`mcp.toolTags[]`, docs/operations.md §16): every tool of
 * `source` whose published name matches `tools` (default: all) carries `tags`. Tags are the
 * gateway's own: they are never published.
 */
export class ToolTagsConfig {
  @IsString({ message: 'is required: a bundle or upstream id' })
  source!: string;

  @IsString({ message: 'must be a tool name or pattern' })
  @Matches(TOOL_PATTERN, { message: 'must be a tool name or a pattern of [A-Za-z0-9_./-] and *' })
  tools = '*';

  @IsArray({ message: 'must be a list of tags' })
  @Matches(TAG_PATTERN, { each: true, message: 'each entry must match [a-z0-9][a-z0-9._:-]{0,63}' })
  tags: string[] = [];
}

/** `mcp.toolSearch` (docs/operations.md §16 "Tool search"): search instead of the whole list on `/mcp`. */
export class ToolSearchConfig {
  @IsBoolean({ message: 'must be true or false' })
  enabled = false;

  /**
   * true (with `enabled`): a 2025 session is also given `gateway__select_tools`, which makes its
   * `tools/list` the tools it names (docs/operations.md §16 "Tool selection").
   */
  @IsBoolean({ message: 'must be true or false' })
  select = false;
}
