import { Inject, Injectable, Logger, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import type { IncomingHeaders } from '@app/execution';
import type { CallerIdentity } from '@app/identity';
import { GatewayMetrics } from '@app/observability';
import { isModernVersion, LEGACY_PROTOCOL_VERSIONS } from '@app/wire';
import { GatewayErrorCode } from '../errors/gateway-error';
import { header, type HttpAnswer, legacyTransportError } from '../answers/http-answer';
import { InFlightRequests } from '../answers/in-flight-requests';
import { NotificationHub } from '../listen/notification-hub.service';
import { ResourceSubscriptions } from '../listen/resource-subscriptions.service';
import {
  RESOURCE_UPDATE_BUS,
  type ResourceBusMessage,
  type ResourceUpdateBus,
} from '../listen/resource-update-bus';
import { selectionKey, ToolSelections } from '../search/tool-selections';
import { VirtualServers } from '../servers/virtual-servers.service';
import { callerKey } from '../session/caller-key';
import { EndedSessions } from '../session/ended-sessions';
import { SessionLogLevels } from '../session/session-log-levels';
import { SessionTokenService } from '../session/session-token.service';
import { SharedValueNotStoredError } from '../session/session-values';

/** The answer to a DELETE that ended its session: 200 without a body, as the v1 SDK's server's. */
const ENDED: HttpAnswer = { status: 200, headers: {} };

/**
 * `DELETE /mcp` with a 2025 session's id (2025-11-25 transports, "Session Management";
 * docs/operations.md §9 "Ending a session"): the session is ended for the caller it was sealed
 * for, and whatever it holds is released — its calls still in flight end (one parked on its
 * client's answer to a relayed or bridged request could only wait out its deadline: the answer's
 * POST is 404 now), its GET streams close, its resource subscriptions (and the bridged upstream
 * listens held only for them) end, its log level and tool selections are forgotten. A sealed id cannot be revoked, so its end is a marker (EndedSessions) every
 * request with the id is checked against until the id would expire: 404 from then on, on this
 * replica at once, on the others within SHARED_SESSION_FRESH_MS through Redis, and their calls,
 * GET streams and subscriptions end when the resource-update bus tells them (best effort, at once).
 * A message of the bus can be lost (a subscriber's connection that broke, a failover): so each
 * replica also looks up, every `mcp.listen.recheckSeconds`, whether a session it holds a GET
 * stream, a subscription or a request in flight for was ended, and releases what it holds of one
 * that was (sweep).
 */
@Injectable()
export class SessionEnding implements OnApplicationShutdown {
  private readonly logger = new Logger('Mcp');
  private readonly sweeper?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly sessions: SessionTokenService,
    private readonly ended: EndedSessions,
    private readonly hub: NotificationHub,
    private readonly subscriptions: ResourceSubscriptions,
    private readonly logLevels: SessionLogLevels,
    private readonly selections: ToolSelections,
    private readonly servers: VirtualServers,
    private readonly inFlight: InFlightRequests,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null,
    @Optional()
    @Inject(RESOURCE_UPDATE_BUS)
    private readonly bus: ResourceUpdateBus | null = null,
  ) {
    bus?.onMessage((message) => this.fromBus(message));
    // with the bus there is Redis, so the markers other replicas set can be read
    if (bus !== null)
      this.sweeper = setInterval(
        () => void this.sweep(),
        config.mcp.listen.recheckSeconds * 1000,
      ).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  /**
   * Ends the session the request names, for its authenticated caller (undefined: `mcp.auth`
   * off). 405 where there are no sessions to end (stateless mode, a 2026 MCP-Protocol-Version),
   * 400 for an unsupported version or without Mcp-Session-Id, 404 for an id that does not open
   * for this caller (another caller's, forged, expired) or was ended already, else 200.
   */
  async end(headers: IncomingHeaders, caller: CallerIdentity | undefined): Promise<HttpAnswer> {
    const stated = header(headers, 'mcp-protocol-version');
    if (!this.sessions.sealed || (stated !== undefined && isModernVersion(stated)))
      // the same answer as before sessions could be ended (and as GET gets without a session)
      return legacyTransportError(
        GatewayErrorCode.MethodNotAllowed,
        'Method Not Allowed: use POST',
        {
          allow: 'POST',
        },
      );
    if (stated !== undefined && !(LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(stated))
      return legacyTransportError(
        GatewayErrorCode.UnsupportedProtocolVersion,
        `Bad Request: Unsupported protocol version: ${stated.slice(0, 40)} (supported versions: ${LEGACY_PROTOCOL_VERSIONS.join(', ')})`,
      );
    const sessionId = header(headers, 'mcp-session-id');
    if (sessionId === undefined)
      return legacyTransportError(
        GatewayErrorCode.InvalidRequest,
        'Bad Request: DELETE ends the session its Mcp-Session-Id header names; send one',
      );
    // the same check as a POST with the id: a session sealed for another caller is not this one's
    const claims = await this.ended.unlessEnded(
      this.sessions.openFor(sessionId, caller),
      sessionId,
    );
    if (claims === undefined)
      return legacyTransportError(GatewayErrorCode.SessionNotFound, 'Session not found');
    const expiresAtMs = claims.expiresAt * 1000;
    try {
      // counted in the caller's share as its other session values are (SessionValues)
      await this.ended.set(sessionId, true, expiresAtMs, Date.now(), callerKey(caller));
    } catch (err) {
      if (!(err instanceof SharedValueNotStoredError)) throw err;
      this.logger.warn(`A session was ended on this replica only: ${err.message}`);
    }
    await this.release(sessionId);
    this.bus?.publish({ op: 'end', session: sessionId, expiresAtMs });
    return ENDED;
  }

  /** Another replica ended a session: it is ended here at once, and what it held here released. */
  private fromBus(message: ResourceBusMessage): void {
    if (message.op !== 'end') return;
    this.ended.learn(message.session, true, message.expiresAtMs);
    void this.release(message.session);
  }

  /**
   * Releases what this replica holds for sessions another replica ended whose bus message did not
   * arrive here (docs/operations.md §9 "Ending a session"): each session with a GET stream, a
   * subscription or a request in flight is looked up (its marker is read from Redis at most once
   * a second, SessionValues), one at a time so that many open streams never make a burst of reads;
   * a sweep still running when the next is due lets it pass.
   */
  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const held = new Set([
        ...this.hub.sessionIds(),
        ...this.subscriptions.sessionIds(),
        ...this.inFlight.sessionIds(),
      ]);
      let released = 0;
      for (const sessionId of held) {
        if (!(await this.ended.isEnded(sessionId))) continue;
        await this.release(sessionId);
        released++;
      }
      if (released > 0)
        this.logger.log(
          `Released ${released} session(s) ended on another replica whose end message did not arrive here`,
        );
    } catch (err) {
      // the next sweep tries again; what a session holds still ends with its id or token at the latest
      this.logger.warn(`Looking up ended sessions failed: ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }

  /** Releases what an ended session holds on this replica (and its values in Redis). */
  private async release(sessionId: string): Promise<void> {
    // aborted as a client's notifications/cancelled aborts one: the upstream request is
    // cancelled, a request put to the client is answered to its upstream (UpstreamRouter.endRelayed)
    this.metrics?.sessionCallsEnded('deleted', this.inFlight.endSession(sessionId));
    this.hub.closeSession(sessionId);
    this.subscriptions.endSession(sessionId);
    // a selection per path the session used (docs/operations.md §16 "Per session and path")
    const keys = [undefined, ...this.servers.ids()].map((server) =>
      selectionKey(sessionId, server),
    );
    await Promise.all([
      this.logLevels.delete(sessionId),
      ...keys.map((key) => this.selections.delete(key)),
    ]);
  }
}
