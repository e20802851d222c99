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
  /** By a digest of the session id: a sealed id is a few KB, its digest 43 characters. */
  private readonly levels = new Map<string, Entry>();
  /** Reads of the shared store in flight, by digest: concurrent calls of a session share one. */
  private readonly reading = new Map<string, Promise<McpLogLevel | undefined>>();

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
    const key = keyOf(sessionId);
    this.remember(key, { level, expiresAtMs, freshUntilMs: this.freshUntil(nowMs) });
    if (this.shared === null) return;
    try {
      await this.shared.set(key, level, Math.max(1, expiresAtMs - nowMs));
    } catch (err) {
      throw new SharedLevelNotStoredError(
        `the level applies on this replica only: Redis could not store it (${(err as Error).message})`,
      );
    }
  }

  /**
   * The session's level; undefined when it set none (or it expired). A promise only when Redis
   * must be asked (no fresh entry on this replica). `sessionId`: an id the front door opened for
   * the caller (MethodContext.sessionId), never a header as sent.
   */
  get(
    sessionId: string | undefined,
    nowMs = Date.now(),
  ): McpLogLevel | undefined | Promise<McpLogLevel | undefined> {
    if (sessionId === undefined) return undefined;
    if (this.shared === null && this.levels.size === 0) return undefined;
    const key = keyOf(sessionId);
    const entry = this.levels.get(key);
    if (entry !== undefined && entry.expiresAtMs <= nowMs) this.levels.delete(key);
    else if (entry !== undefined && entry.freshUntilMs > nowMs) return entry.level;
    if (this.shared === null) return undefined;
    let pending = this.reading.get(key);
    if (pending === undefined) {
      pending = this.read(key, nowMs).finally(() => this.reading.delete(key));
      this.reading.set(key, pending);
    }
    return pending;
  }

  private async read(key: string, nowMs: number): Promise<McpLogLevel | undefined> {
    const before = this.levels.get(key);
    let stored: string | null = null;
    try {
      stored = (await this.shared?.get(key)) ?? null;
    } catch {
      // unreachable: as if none was set (every level relayed), asked again in a second
    }
    // a setLevel on this replica while Redis was asked is newer than what Redis answered
    const now = this.levels.get(key);
    if (now !== undefined && now !== before && now.freshUntilMs > nowMs) return now.level;
    const level = logRank(stored) === undefined ? undefined : (stored as McpLogLevel);
    // a second bounds what was read (the session id's own expiry is not known here)
    this.remember(key, {
      level,
      expiresAtMs: nowMs + SHARED_LEVEL_FRESH_MS,
      freshUntilMs: this.freshUntil(nowMs),
    });
    return level;
  }

  private freshUntil(nowMs: number): number {
    return this.shared === null ? Number.POSITIVE_INFINITY : nowMs + SHARED_LEVEL_FRESH_MS;
  }

  private remember(key: string, entry: Entry): void {
    this.levels.delete(key);
    if (this.levels.size >= MAX_SESSION_LOG_LEVELS) {
      const oldest = this.levels.keys().next();
      if (oldest.done !== true) this.levels.delete(oldest.value);
    }
    this.levels.set(key, entry);
  }
}

/** The store's key of a session: a digest (a session id is a sealed token, never stored). */
function keyOf(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('base64url');
}
