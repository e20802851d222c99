import { Inject, Injectable, Optional } from '@nestjs/common';
import { SHARED_SESSION_STORE, type SharedSessionStore } from './shared-session-store';
import { SessionValues, type SessionValueKind } from './session-values';

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

const LOG_LEVEL_KIND: SessionValueKind<McpLogLevel> = {
  name: 'log-level',
  maxSessions: MAX_SESSION_LOG_LEVELS,
  write: (level) => level,
  read: (stored) => (logRank(stored) === undefined ? undefined : (stored as McpLogLevel)),
};

/**
 * The level each 2025 session asked for with `logging/setLevel` (docs/operations.md §10
 * "Logging"). The gateway's session with an upstream is shared by every client, so the level set
 * there is the last client's: the gateway filters what it relays to each client by that client's
 * own level, and puts it in the `_meta` of the requests it sends a 2026 upstream for the session
 * (`io.modelcontextprotocol/logLevel`), which has no setLevel. Kept per replica, or with Redis
 * for every replica (SessionValues); a Redis that cannot be reached reads as "no level" (every
 * level relayed).
 */
@Injectable()
export class SessionLogLevels extends SessionValues<McpLogLevel> {
  constructor(
    @Optional()
    @Inject(SHARED_SESSION_STORE)
    shared: SharedSessionStore | null = null,
  ) {
    super(LOG_LEVEL_KIND, shared);
  }
}
