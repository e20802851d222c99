/**
 * The text block of a bundle tool's result. `_meta.searchTime` is the call's elapsed ms
 * (contract §10); on a 4xx/5xx answer carrying a valid Retry-After, `_meta.retryAfterSeconds`
 * (whole seconds) and, for the date form, `_meta.retryAfter` (the IMF-fixdate) say when to
 * try again (docs/operations.md §7 "Retry-After").
 */
export interface TextContent {
  readonly type: 'text';
  readonly text: string;
  readonly _meta: {
    readonly searchTime: number;
    readonly retryAfterSeconds?: number;
    readonly retryAfter?: string;
  };
}

/** MCP CallToolResult as this gateway produces it for bundle tools: one text block. */
export interface CallToolResult {
  readonly content: readonly [TextContent];
  /** Present (true) only for tool execution errors: 4xx, 5xx, timeout, connection failure (§10). */
  readonly isError?: true;
  /** The answer object, for a tool with an outputSchema that it matched (structured-output.ts). */
  readonly structuredContent?: Readonly<Record<string, unknown>>;
}

/** The caller headers a tool call may carry on to its Tool Service (contract §10). */
export const FORWARDED_CALLER_HEADERS = [
  'guid',
  'x-request-id',
  'mcp-session-id',
  'employee-no',
  'virtual-employee-no',
] as const;

/** Incoming request headers, lower-cased, as node:http gives them. */
export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;
