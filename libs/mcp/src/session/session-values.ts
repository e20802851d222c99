import { createHash } from 'node:crypto';
import { redisFailureText } from '@app/redis';
import type { SharedSessionStore } from './shared-session-store';

/**
 * With Redis: how long a replica trusts what it read or wrote before reading Redis again, ms, so
 * a value another replica set reaches its calls within about a second, at most one read per
 * session per second.
 */
export const SHARED_SESSION_FRESH_MS = 1_000;

interface Entry<V> {
  /** The value, or undefined: known to have none. */
  readonly value?: V;
  /** When the session id expires (ms since the epoch). */
  readonly expiresAtMs: number;
  /** With a shared store: until when this entry is used without asking it again. */
  readonly freshUntilMs: number;
}

/** What a kind of per-session value is called in the store and how it is written there. */
export interface SessionValueKind<V> {
  /** The key's first part in the shared store (`log-level`, `tool-selection`). */
  readonly name: string;
  /** Sessions one replica remembers; past it the oldest is forgotten. */
  readonly maxSessions: number;
  write(value: V): string;
  /** undefined for what does not read as a value of the kind (a damaged or foreign key). */
  read(stored: string): V | undefined;
}

/** The value a Redis write failure leaves the client with, as its error says. */
export class SharedValueNotStoredError extends Error {}

/**
 * One value per 2025 session (docs/operations.md §10 "Logging", §16 "Tool search"). Without
 * Redis in this replica's memory; with Redis stored under `<kind>:<digest of the session id>`
 * until the session id expires, and read by the replica a request reaches — a Redis read on the
 * request path, bounded by `mcp.redis.commandTimeoutMillis` and made at most once a second per
 * session (SHARED_SESSION_FRESH_MS); a Redis that cannot be reached reads as "none", and a write
 * it refuses is an error that says so.
 */
export class SessionValues<V> {
  /** By a digest of the session id: a sealed id is a few KB, its digest 43 characters. */
  private readonly values = new Map<string, Entry<V>>();
  /** Reads of the shared store in flight, by digest: concurrent calls of a session share one. */
  private readonly reading = new Map<string, Promise<V | undefined>>();
  /**
   * With `mcp.auth` on, the keys each caller set, oldest first, and whose each key is: one caller
   * holds at most a tenth of `maxSessions` on this replica, so its sessions push out its own
   * oldest value, never another caller's (as streams and subscriptions are shared out). The
   * value pushed out goes from the shared store too: what a caller sets through a replica is
   * bounded in Redis as in memory (sessions cost nothing to open, and their values live a day).
   */
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly ownerOf = new Map<string, string>();

  constructor(
    private readonly kind: SessionValueKind<V>,
    private readonly shared: SharedSessionStore | null,
  ) {}

  /**
   * Remembers the session's value until `expiresAtMs`; with Redis, for every replica.
   * @throws SharedValueNotStoredError when Redis could not store it (this replica keeps it)
   */
  async set(
    sessionId: string,
    value: V,
    expiresAtMs: number,
    nowMs = Date.now(),
    owner?: string,
  ): Promise<void> {
    const key = this.keyOf(sessionId);
    this.remember(key, { value, expiresAtMs, freshUntilMs: this.freshUntil(nowMs) }, owner);
    if (this.shared === null) return;
    try {
      await this.shared.set(key, this.kind.write(value), Math.max(1, expiresAtMs - nowMs));
    } catch (err) {
      throw new SharedValueNotStoredError(
        `applies on this replica only: Redis could not store it (${redisFailureText(err)})`,
      );
    }
  }

  /**
   * Keeps a value another replica told of (it is in the shared store already) on this replica
   * only, until `expiresAtMs`, so this replica need not wait for its freshness window to see it.
   */
  learn(sessionId: string, value: V, expiresAtMs: number, nowMs = Date.now()): void {
    if (expiresAtMs <= nowMs) return;
    this.remember(this.keyOf(sessionId), {
      value,
      expiresAtMs,
      freshUntilMs: this.freshUntil(nowMs),
    });
  }

  /**
   * Forgets the session's value, on this replica and in the shared store (its session ended:
   * docs/operations.md §9 "Ending a session"). Best effort with Redis: a store that cannot be
   * reached keeps the value until the session id's expiry, where nobody can read it any more.
   */
  async delete(sessionId: string): Promise<void> {
    if (this.shared === null && this.values.size === 0) return;
    const key = this.keyOf(sessionId);
    this.forget(key);
    await this.shared?.delete(key).catch(() => undefined);
  }

  /**
   * The session's value; undefined when it has none (or it expired). A promise only when Redis
   * must be asked (no fresh entry on this replica). `sessionId`: an id the front door opened for
   * the caller (MethodContext.sessionId), never a header as sent.
   */
  get(sessionId: string | undefined, nowMs = Date.now()): V | undefined | Promise<V | undefined> {
    if (sessionId === undefined) return undefined;
    if (this.shared === null && this.values.size === 0) return undefined;
    const key = this.keyOf(sessionId);
    const entry = this.values.get(key);
    if (entry !== undefined && entry.expiresAtMs <= nowMs) this.forget(key);
    else if (entry !== undefined && entry.freshUntilMs > nowMs) return entry.value;
    if (this.shared === null) return undefined;
    let pending = this.reading.get(key);
    if (pending === undefined) {
      pending = this.read(key, nowMs).finally(() => this.reading.delete(key));
      this.reading.set(key, pending);
    }
    return pending;
  }

  private async read(key: string, nowMs: number): Promise<V | undefined> {
    const before = this.values.get(key);
    let stored: string | null = null;
    try {
      stored = (await this.shared?.get(key)) ?? null;
    } catch {
      // unreachable: what this replica holds stays (a value set while Redis was away is kept
      // here, as its error said), else as if none was set; asked again in a second
      if (before?.value !== undefined) {
        this.remember(key, {
          value: before.value,
          expiresAtMs: Math.max(before.expiresAtMs, nowMs + SHARED_SESSION_FRESH_MS),
          freshUntilMs: this.freshUntil(nowMs),
        });
        return before.value;
      }
    }
    // a set on this replica while Redis was asked is newer than what Redis answered
    const now = this.values.get(key);
    if (now !== undefined && now !== before && now.freshUntilMs > nowMs) return now.value;
    const value = stored === null ? undefined : this.kind.read(stored);
    // a second bounds what was read (the session id's own expiry is not known here)
    this.remember(key, {
      value,
      expiresAtMs: nowMs + SHARED_SESSION_FRESH_MS,
      freshUntilMs: this.freshUntil(nowMs),
    });
    return value;
  }

  private freshUntil(nowMs: number): number {
    return this.shared === null ? Number.POSITIVE_INFINITY : nowMs + SHARED_SESSION_FRESH_MS;
  }

  /** Keeps `entry` for `key`, set by `owner` (a caller with `mcp.auth` on) or read back (none). */
  private remember(key: string, entry: Entry<V>, owner?: string): void {
    const previousOwner = this.ownerOf.get(key);
    this.forget(key);
    // a value read back from the shared store stays its setter's on this replica
    const by = owner ?? previousOwner;
    if (by !== undefined) {
      const own = this.byOwner.get(by);
      const share = Math.max(1, Math.floor(this.kind.maxSessions / 10));
      if (own !== undefined && own.size >= share) {
        const pushedOut = own.values().next().value as string;
        this.forget(pushedOut);
        void this.shared?.delete(pushedOut).catch(() => undefined);
      }
    }
    if (this.values.size >= this.kind.maxSessions) {
      const oldest = this.values.keys().next();
      if (oldest.done !== true) this.forget(oldest.value);
    }
    this.values.set(key, entry);
    if (by !== undefined) {
      let own = this.byOwner.get(by);
      if (own === undefined) this.byOwner.set(by, (own = new Set()));
      own.add(key);
      this.ownerOf.set(key, by);
    }
  }

  private forget(key: string): void {
    this.values.delete(key);
    const owner = this.ownerOf.get(key);
    if (owner === undefined) return;
    this.ownerOf.delete(key);
    const own = this.byOwner.get(owner);
    own?.delete(key);
    if (own?.size === 0) this.byOwner.delete(owner);
  }

  /** The store's key of a session: a digest (a session id is a sealed token, never stored). */
  private keyOf(sessionId: string): string {
    return `${this.kind.name}:${createHash('sha256').update(sessionId).digest('base64url')}`;
  }
}
