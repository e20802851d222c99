import { Inject, Injectable, Optional } from '@nestjs/common';
import { SHARED_SESSION_STORE, type SharedSessionStore } from './shared-session-store';
import { SessionValues, type SessionValueKind } from './session-values';
import type { SessionClaims } from './session-token.service';

/**
 * Ended sessions one replica remembers (as many as log levels); past it the oldest is forgotten
 * here (it stays in Redis), and one caller holds at most a tenth of it (SessionValues).
 */
export const MAX_ENDED_SESSIONS = 100_000;

const ENDED_KIND: SessionValueKind<true> = {
  name: 'ended',
  maxSessions: MAX_ENDED_SESSIONS,
  write: () => '1',
  read: (stored) => (stored === '1' ? true : undefined),
};

/**
 * The 2025 sessions their client ended with `DELETE /mcp` (docs/operations.md §9 "Ending a
 * session"; 2025-11-25 transports, "Session Management": a request with an ended session's id is
 * answered 404). A sealed id cannot be revoked, so its end is a marker kept until the id would
 * expire: per replica, or with Redis for every replica within SHARED_SESSION_FRESH_MS
 * (SessionValues), counted against the caller's share like its other session values.
 */
@Injectable()
export class EndedSessions extends SessionValues<true> {
  constructor(
    @Optional()
    @Inject(SHARED_SESSION_STORE)
    shared: SharedSessionStore | null = null,
  ) {
    super(ENDED_KIND, shared);
  }

  /**
   * Whether the session was ended; a promise only when Redis must be asked (at most once a
   * second per session). Without Redis and no session ended on this replica: no lookup at all.
   */
  isEnded(sessionId: string): boolean | Promise<boolean> {
    const value = this.get(sessionId);
    return value instanceof Promise ? value.then((v) => v === true) : value === true;
  }

  /**
   * The claims of a session id that opened for its caller (SessionTokenService.openFor), unless
   * its client ended it: undefined then, as for an id that does not open. The one check every
   * request with a session id gets (a POST, a notification or relay answer, the GET stream, a
   * DELETE); a promise only when Redis must be asked.
   */
  unlessEnded(
    claims: SessionClaims | undefined,
    sessionId: string,
  ): SessionClaims | undefined | Promise<SessionClaims | undefined> {
    if (claims === undefined) return undefined;
    const ended = this.isEnded(sessionId);
    if (typeof ended === 'boolean') return ended ? undefined : claims;
    return ended.then((yes) => (yes ? undefined : claims));
  }
}
