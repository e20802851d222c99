/** The log levels of MCP, least severe first (RFC 5424 severities; MCP 2025-11-25, "Logging"). */
export const MCP_LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

const RANK: ReadonlyMap<unknown, number> = new Map(MCP_LOG_LEVELS.map((level, i) => [level, i]));

/** A level's severity rank (debug 0 … emergency 7); undefined for anything else. */
export function logRank(level: unknown): number | undefined {
  return RANK.get(level);
}

/**
 * The more verbose of two levels (the one that lets more messages through); `current`
 * undefined (nothing asked yet) gives `asked`.
 */
export function moreVerboseLevel(
  current: McpLogLevel | undefined,
  asked: McpLogLevel,
): McpLogLevel {
  return current !== undefined && RANK.get(current)! < RANK.get(asked)! ? current : asked;
}
