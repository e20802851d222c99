import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { UpstreamListener } from '@app/execution';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { NotificationHub } from './notification-hub.service';

/** The method an upstream tells a resource change with (MCP 2025-11-25, "Subscriptions"). */
const RESOURCE_UPDATED = 'notifications/resources/updated';
/** Subscriptions one 2025 session may hold on this replica, and all sessions together. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 100;
export const MAX_SUBSCRIPTIONS = 10_000;
/** How often expired sessions' subscriptions are dropped. */
const SWEEP_EVERY_MS = 60_000;
/** The longest URI an update is relayed for (a subscribed URI is never longer). */
const MAX_URI_LENGTH = 8192;

interface Subscription {
  readonly upstreamId: string;
  readonly uri: string;
}

interface SessionSubscriptions {
  /** When the session's id stops opening (its `exp`), in ms. */
  readonly expiresAtMs: number;
  readonly entries: Map<string, Subscription>;
}

function keyOf(upstreamId: string, uri: string): string {
  return `${upstreamId}\u0000${uri}`;
}

/**
 * The resource subscriptions of 2025 sessions on this replica (docs/operations.md §10
 * "Resource subscriptions"). `resources/subscribe` is forwarded to the URI's owner on the
 * gateway's one session with that upstream, so the upstream's `notifications/resources/updated`
 * arrive on that session's standalone GET stream; they are relayed to the GET streams of the
 * client sessions subscribed to that URI here, each within its caller's grant. An upstream is
 * told `resources/unsubscribe` only when no other session on this replica still subscribes to
 * the URI (one upstream session serves them all). Bounded: at most
 * MAX_SUBSCRIPTIONS_PER_SESSION per session and MAX_SUBSCRIPTIONS in all; a session's
 * subscriptions end with its id's expiry.
 */
@Injectable()
export class ResourceSubscriptions implements OnApplicationShutdown {
  private readonly bySession = new Map<string, SessionSubscriptions>();
  /** Sessions subscribed, per upstream and URI. */
  private readonly subscribers = new Map<string, Set<string>>();
  private total = 0;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly hub: NotificationHub,
    listener: UpstreamListener,
  ) {
    listener.onSessionMessage((upstreamId, message) => this.updated(upstreamId, message));
  }

  /**
   * Records that `sessionId` subscribes to `uri` of `upstreamId` until `expiresAtMs`.
   * @throws GatewayError (invalid params) when the session or the replica holds as many as it may
   */
  add(sessionId: string, expiresAtMs: number, upstreamId: string, uri: string): void {
    this.sweep(Date.now());
    const key = keyOf(upstreamId, uri);
    let session = this.bySession.get(sessionId);
    if (session?.entries.has(key) === true) return;
    if ((session?.entries.size ?? 0) >= MAX_SUBSCRIPTIONS_PER_SESSION)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Too many resource subscriptions: a session may hold ${MAX_SUBSCRIPTIONS_PER_SESSION}; unsubscribe from one first`,
      );
    if (this.total >= MAX_SUBSCRIPTIONS)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        'Too many resource subscriptions on this gateway replica; try again later',
      );
    if (session === undefined) {
      session = { expiresAtMs, entries: new Map() };
      this.bySession.set(sessionId, session);
    }
    session.entries.set(key, { upstreamId, uri });
    let sessions = this.subscribers.get(key);
    if (sessions === undefined) {
      sessions = new Set();
      this.subscribers.set(key, sessions);
    }
    sessions.add(sessionId);
    this.total++;
    this.sweeper ??= setInterval(() => this.sweep(Date.now()), SWEEP_EVERY_MS).unref();
  }

  /**
   * Forgets that `sessionId` subscribes to `uri` of `upstreamId`.
   * @returns whether another session on this replica still subscribes to it (then the
   *   upstream must not be told to unsubscribe)
   */
  remove(sessionId: string, upstreamId: string, uri: string): boolean {
    const key = keyOf(upstreamId, uri);
    this.drop(sessionId, key);
    return (this.subscribers.get(key)?.size ?? 0) > 0;
  }

  /** Subscriptions held on this replica. */
  get size(): number {
    return this.total;
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  private updated(upstreamId: string, message: Readonly<Record<string, unknown>>): void {
    if (message.method !== RESOURCE_UPDATED) return;
    const params = message.params;
    const uri =
      typeof params === 'object' && params !== null && !Array.isArray(params)
        ? (params as Record<string, unknown>).uri
        : undefined;
    if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH) return;
    const sessions = this.subscribers.get(keyOf(upstreamId, uri));
    if (sessions === undefined || sessions.size === 0) return;
    this.hub.toSessions(
      sessions,
      upstreamId,
      JSON.stringify({ jsonrpc: '2.0', method: RESOURCE_UPDATED, params }),
    );
  }

  private drop(sessionId: string, key: string): void {
    const session = this.bySession.get(sessionId);
    if (session?.entries.delete(key) !== true) return;
    this.total--;
    if (session.entries.size === 0) this.bySession.delete(sessionId);
    const sessions = this.subscribers.get(key);
    sessions?.delete(sessionId);
    if (sessions?.size === 0) this.subscribers.delete(key);
  }

  private sweep(nowMs: number): void {
    for (const [sessionId, session] of this.bySession) {
      if (session.expiresAtMs > nowMs) continue;
      for (const key of [...session.entries.keys()]) this.drop(sessionId, key);
    }
    if (this.total === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
