import { createHash } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { SHARED_LEVEL_STORE, type SharedLevelStore } from './shared-level-store';

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
 * With Redis: how long this replica trusts what it read or wrote before reading Redis again,
 * ms, so a level another replica set reaches its calls within about a second, at most one read
 * per session per second.
 */
export const SHARED_LEVEL_FRESH_MS = 1_000;

interface Entry {
  /** The level, or undefined: known to have none. */
  readonly level?: McpLogLevel;
  /** When the session id expires (ms since the epoch). */
  readonly expiresAtMs: number;
  /** With a shared store: until when this entry is used without asking it again. */
  readonly freshUntilMs: number;
}

/** The level a Redis write failure leaves the client with, as its error says. */
export class SharedLevelNotStoredError extends Error {}

/**
 * The level each 2025 session asked for with `logging/setLevel` (docs/operations.md §10
 * "Logging"). The gateway's session with an upstream is shared by every client, so the level set
 * there is the last client's: the gateway filters what it relays to each client by that client's
 * own level, and puts it in the `_meta` of the requests it sends a 2026 upstream for the session
 * (`io.modelcontextprotocol/logLevel`), which has no setLevel.
 *
 * Without Redis the level lives in this replica's memory (a call that reaches another replica
 * relays every level). With Redis (REDIS_URL) it is stored under a digest of the session id until
 * the session id expires, and read by the replica a call reaches — a Redis read on the request
 * path, bounded by `mcp.redis.commandTimeoutMillis` and made at most once a second per session
 * (SHARED_LEVEL_FRESH_MS); a Redis that cannot be reached reads as "no level" (every level
 * relayed) and makes `setLevel` an error that says so. At most MAX_SESSION_LOG_LEVELS sessions
 * per replica.
 */
@Injectable()
export class SessionLogLevels {
  private readonly levels = new Map<string, Entry>();

  constructor(
    @Optional() @Inject(SHARED_LEVEL_STORE) private readonly shared: SharedLevelStore | null = null,
  ) {}

  /**
   * Remembers the session's level until `expiresAtMs`; with Redis, for every replica.
   * @throws SharedLevelNotStoredError when Redis could not store it (this replica keeps it)
   */
  async set(
    sessionId: string,
    level: McpLogLevel,
    expiresAtMs: number,
    nowMs = Date.now(),
  ): Promise<void> {
    this.remember(sessionId, { level, expiresAtMs, freshUntilMs: this.freshUntil(nowMs) });
    if (this.shared === null) return;
    try {
      await this.shared.set(keyOf(sessionId), level, Math.max(1, expiresAtMs - nowMs));
    } catch (err) {
      throw new SharedLevelNotStoredError(
        `the level applies on this replica only: Redis could not store it (${(err as Error).message})`,
      );
    }
  }

  /**
   * The session's level; undefined when it set none (or it expired). A promise only when Redis
   * must be asked (no fresh entry on this replica).
   */
  get(
    sessionId: string | undefined,
    nowMs = Date.now(),
  ): McpLogLevel | undefined | Promise<McpLogLevel | undefined> {
    if (sessionId === undefined) return undefined;
    if (this.shared === null && this.levels.size === 0) return undefined;
    const entry = this.levels.get(sessionId);
    if (entry !== undefined && entry.expiresAtMs <= nowMs) this.levels.delete(sessionId);
    else if (entry !== undefined && entry.freshUntilMs > nowMs) return entry.level;
    if (this.shared === null) return undefined;
    return this.read(sessionId, nowMs);
  }

  private async read(sessionId: string, nowMs: number): Promise<McpLogLevel | undefined> {
    let stored: string | null = null;
    try {
      stored = (await this.shared?.get(keyOf(sessionId))) ?? null;
    } catch {
      // unreachable: as if none was set (every level relayed), asked again in a second
    }
    const level = logRank(stored) === undefined ? undefined : (stored as McpLogLevel);
    // the session id's own expiry bounds the entry; a second bounds its freshness
    this.remember(sessionId, {
      level,
      expiresAtMs: nowMs + SHARED_LEVEL_FRESH_MS,
      freshUntilMs: this.freshUntil(nowMs),
    });
    return level;
  }

  private freshUntil(nowMs: number): number {
    return this.shared === null ? Number.POSITIVE_INFINITY : nowMs + SHARED_LEVEL_FRESH_MS;
  }

  private remember(sessionId: string, entry: Entry): void {
    this.levels.delete(sessionId);
    if (this.levels.size >= MAX_SESSION_LOG_LEVELS) {
      const oldest = this.levels.keys().next();
      if (oldest.done !== true) this.levels.delete(oldest.value);
    }
    this.levels.set(sessionId, entry);
  }
}

/** The store's key of a session: a digest (a session id is a sealed token, never stored). */
function keyOf(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('base64url');
}
