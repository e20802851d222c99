import { Inject, Injectable, Optional } from '@nestjs/common';
import { SHARED_SESSION_STORE, type SharedSessionStore } from './shared-session-store';
import { SessionValues, type SessionValueKind } from './session-values';
import { logRank, type McpLogLevel } from '@app/wire';

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
 * there is the most verbose any client asked (UpstreamConnection): the gateway filters what it relays to each client by that client's
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
