import { Injectable } from '@nestjs/common';

/** The log levels of MCP, least severe first (RFC 5424 severities; MCP 2025-11-25, "Logging"). */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type McpLogLevel = (typeof LOG_LEVELS)[number];

const RANK: ReadonlyMap<unknown, number> = new Map(LOG_LEVELS.map((level, i) => [level, i]));

/** A level's severity rank (debug 0 … emergency 7); undefined for anything else. */
export function logRank(level: unknown): number | undefined {
  return RANK.get(level);
}

/** Sessions whose level one replica remembers; past it the oldest is forgotten. */
export const MAX_SESSION_LOG_LEVELS = 100_000;

/**
 * The level each 2025 session asked for with `logging/setLevel`, on this replica
 * (docs/operations.md §10 "Logging"). The gateway's session with an upstream is shared by every
 * client, so the level set there is the last client's: the gateway filters what it relays to
 * each client by that client's own level, and puts it in the `_meta` of the requests it sends a
 * 2026 upstream for the session (`io.modelcontextprotocol/logLevel`), which has no setLevel.
 * Remembered until the session id expires, at most MAX_SESSION_LOG_LEVELS sessions.
 */
@Injectable()
export class SessionLogLevels {
  private readonly levels = new Map<string, { level: McpLogLevel; expiresAtMs: number }>();

  set(sessionId: string, level: McpLogLevel, expiresAtMs: number): void {
    this.levels.delete(sessionId);
    if (this.levels.size >= MAX_SESSION_LOG_LEVELS) {
      const oldest = this.levels.keys().next();
      if (oldest.done !== true) this.levels.delete(oldest.value);
    }
    this.levels.set(sessionId, { level, expiresAtMs });
  }

  /** The session's level; undefined when it set none (or it expired). */
  get(sessionId: string | undefined, nowMs = Date.now()): McpLogLevel | undefined {
    if (sessionId === undefined || this.levels.size === 0) return undefined;
    const entry = this.levels.get(sessionId);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.levels.delete(sessionId);
      return undefined;
    }
    return entry.level;
  }
}
