import { Injectable } from '@nestjs/common';
import type { CallCancellation } from '@app/execution';
import type { CallerIdentity } from '@app/identity';
import { callerKey } from '../session/caller-key';

/** What the /mcp listener knows about one request in flight. */
export interface InFlightCall {
  /** Aborted when nobody waits for the answer any more. */
  readonly controller: CallCancellation;
  /** The client's connection, for matching notifications/cancelled without a session. */
  readonly connectionId: number;
}

/**
 * The requests in flight that a `notifications/cancelled` may name (MCP lifecycle,
 * cancellation): matched by the sender's session and request id, or, without a session, by the
 * connection and request id, and always by the caller, so one client can never cancel another's
 * call — not by naming its session id in stateless mode (where the header is no session and
 * nobody's), nor over a connection a proxy in front shares between clients. A cancellation that
 * reaches another replica finds nothing here and is ignored (the spec allows it: the call may
 * have finished already).
 */
@Injectable()
export class InFlightRequests {
  private readonly byKey = new Map<string, CallCancellation>();
  /**
   * The requests of each 2025 session, for ending them with it (endSession): a set per session
   * with requests in flight, removed with its last one, so a session that is not calling costs
   * nothing here.
   */
  private readonly bySession = new Map<string, Set<CallCancellation>>();

  /**
   * The key of request `idText` (its id as a cancellation names it: idKey) of this client.
   * @param sessionId the sealed session the request was opened for this caller (undefined in
   *   stateless mode, or without one)
   */
  keyOf(
    sessionId: string | undefined,
    caller: CallerIdentity | undefined,
    connectionId: number,
    idText: string,
  ): string {
    const who = callerKey(caller) ?? '';
    return sessionId === undefined
      ? `c\u0000${who}\u0000${connectionId}\u0000${idText}`
      : `s\u0000${who}\u0000${sessionId}\u0000${idText}`;
  }

  /** @param sessionId the request's 2025 session (as in keyOf), whose end ends it (endSession) */
  register(key: string, controller: CallCancellation, sessionId?: string): void {
    this.byKey.set(key, controller);
    if (sessionId === undefined) return;
    let calls = this.bySession.get(sessionId);
    if (calls === undefined) this.bySession.set(sessionId, (calls = new Set()));
    calls.add(controller);
  }

  /** Forgets the request, unless another request has taken its key since. */
  unregister(key: string, controller: CallCancellation, sessionId?: string): void {
    if (this.byKey.get(key) === controller) this.byKey.delete(key);
    if (sessionId === undefined) return;
    const calls = this.bySession.get(sessionId);
    if (calls?.delete(controller) === true && calls.size === 0) this.bySession.delete(sessionId);
  }

  /** The 2025 sessions with a request in flight on this replica. */
  sessionIds(): IterableIterator<string> {
    return this.bySession.keys();
  }

  /**
   * The 2025 session ended (DELETE /mcp, here or on another replica: SessionEnding): each of its
   * requests still in flight on this replica is aborted (`session-ended`), so a call parked on
   * its client's answer to a relayed or bridged request — which can never come, its POST being
   * 404 now — ends at once and cancels its upstream request, as a client that went away does
   * (docs/operations.md §9 "Ending a session").
   * @returns how many were aborted
   */
  endSession(sessionId: string): number {
    const calls = this.bySession.get(sessionId);
    if (calls === undefined) return 0;
    this.bySession.delete(sessionId);
    let ended = 0;
    for (const controller of calls) {
      if (controller.aborted) continue;
      controller.abort('session-ended');
      ended++;
    }
    return ended;
  }

  /** Aborts the request under `key`; false when none is in flight. */
  cancel(key: string): boolean {
    const controller = this.byKey.get(key);
    if (controller === undefined) return false;
    controller.abort('cancelled');
    return true;
  }

  /** Requests currently registered (for tests and diagnostics). */
  get size(): number {
    return this.byKey.size;
  }
}
