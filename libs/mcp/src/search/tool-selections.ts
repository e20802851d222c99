import { Inject, Injectable, Optional } from '@nestjs/common';
import { storedJsonLimit } from '@app/redis';
import { MAX_PUBLISHED_NAME } from '@app/registry';
import { SHARED_SESSION_STORE, type SharedSessionStore } from '../session/shared-session-store';
import { SessionValues, type SessionValueKind } from '../session/session-values';

/** Tools one selection names at most: a list an agent reads every turn stays small. */
export const MAX_SELECTED_TOOLS = 50;
/** Sessions whose selection one replica remembers; past it the oldest is forgotten. */
export const MAX_SESSION_SELECTIONS = 10_000;

/**
 * The longest stored selection parsed: MAX_SELECTED_TOOLS published names (at most
 * MAX_PUBLISHED_NAME characters each, as bundles' are too); a longer value is no selection
 * this gateway wrote, and reads as none.
 */
const MAX_STORED_CHARS = storedJsonLimit(MAX_SELECTED_TOOLS * MAX_PUBLISHED_NAME);

const SELECTION_KIND: SessionValueKind<readonly string[]> = {
  name: 'tool-selection',
  maxSessions: MAX_SESSION_SELECTIONS,
  write: (names) => JSON.stringify(names),
  read: (stored) => {
    if (stored.length > MAX_STORED_CHARS) return undefined;
    try {
      const names: unknown = JSON.parse(stored);
      return Array.isArray(names)
        ? names.filter((n): n is string => typeof n === 'string').slice(0, MAX_SELECTED_TOOLS)
        : undefined;
    } catch {
      return undefined;
    }
  },
};

/**
 * Where a session's selection on a path is kept: a session that reaches several paths (a
 * virtual server's and `/mcp`) has one selection on each, as each path has its own list.
 */
export function selectionKey(sessionId: string, server: string | undefined): string {
  return server === undefined ? sessionId : `${sessionId}\n${server}`;
}

/**
 * The tools each 2025 session selected with `gateway__select_tools` (docs/operations.md §16
 * "Tool selection"): its `tools/list` is the gateway's search tools and these. Kept until the
 * session id expires, per replica or with Redis for every replica (SessionValues).
 */
@Injectable()
export class ToolSelections extends SessionValues<readonly string[]> {
  constructor(
    @Optional()
    @Inject(SHARED_SESSION_STORE)
    shared: SharedSessionStore | null = null,
  ) {
    super(SELECTION_KIND, shared);
  }
}
