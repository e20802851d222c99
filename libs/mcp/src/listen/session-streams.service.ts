import { Inject, Injectable, Optional } from '@nestjs/common';
import type { CallCancellation, IncomingHeaders } from '@app/execution';
import { ResourceServer, type CallerAccess, type CallerIdentity } from '@app/identity';
import { isModernVersion, JsonRpcCode, LEGACY_PROTOCOL_VERSIONS } from '@app/wire';
import { GatewayErrorCode } from '../errors/gateway-error';
import { ServerCapabilities } from '../servers/server-capabilities';
import {
  acceptsEventStream,
  errorEnvelope,
  header,
  type HttpAnswer,
  legacyTransportError,
  messageAnswer,
  streamAnswer,
} from '../answers/http-answer';
import { SessionTokenService, type SessionClaims } from '../session/session-token.service';
import { EndedSessions } from '../session/ended-sessions';
import { LIST_CHANGED_METHOD, type ListKind } from './catalog-changes';
import { NotificationHub, type OpenStream } from './notification-hub.service';
import { NotificationStream } from './notification-stream';
import { VirtualServers } from '../servers/virtual-servers.service';

/**
 * A 2025 session's GET stream: the catalog's list_changed notifications, the resource updates
 * the session subscribed to, keep-alive comments.
 */
class SessionStream implements OpenStream {
  private closed = false;

  constructor(
    readonly stream: NotificationStream,
    private readonly capabilities: ServerCapabilities,
    private readonly onClosed: (stream: SessionStream) => void,
    /** The caller's grant: list changes outside it are not told (NotificationHub). */
    readonly access: CallerAccess | undefined,
    /** Its session: resource updates it subscribed to come here (ResourceSubscriptions). */
    readonly sessionId: string,
  ) {}

  listChanged(kind: ListKind): void {
    // 2025: a list_changed only for a list the server declares (listChanged: true)
    if (this.capabilities.current()[kind] !== undefined)
      this.stream.push(`{"jsonrpc":"2.0","method":"${LIST_CHANGED_METHOD[kind]}"}`);
  }

  keepAlive(): void {
    this.stream.comment('keepalive');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.end();
    this.onClosed(this);
  }
}

/**
 * `GET /mcp` of a 2025 session (Streamable HTTP 2025-11-25, "Listening for Messages from the
 * Server"; docs/operations.md §11 "Notification streams"): an SSE stream that carries the catalog's
 * list_changed notifications until the client closes it or the gateway drains. Sessions are sealed
 * tokens, so any replica serves the GET of any session. Refusals: 405 without a session (none
 * given, a 2026 MCP-Protocol-Version, or stateless mode, where there are no sessions), 404 for a
 * session id that does not open, 406 without `Accept: text/event-stream`, 400 for an unsupported
 * MCP-Protocol-Version, 503 when `mcp.listen.maxStreams` streams are open, 429 when the caller
 * has `maxStreamsPerCaller` open. The request was authenticated as a POST is (McpExchanges);
 * a session sealed for another caller does not open (404), and the stream closes when the
 * caller's token expires, or when a recheck finds the token refused or the grant changed
 * (NotificationHub).
 */
@Injectable()
export class SessionStreams {
  constructor(
    private readonly sessions: SessionTokenService,
    private readonly hub: NotificationHub,
    private readonly capabilities: ServerCapabilities,
    private readonly resourceServer: ResourceServer,
    @Optional()
    @Inject(VirtualServers)
    private readonly servers: VirtualServers | null = null,
    /** Sessions their client ended; without it (unit tests) none is. */
    @Optional()
    @Inject(EndedSessions)
    private readonly ended: EndedSessions | null = null,
  ) {}

  /**
   * @param signal aborted when the client closes the stream
   * @param caller the authenticated caller (undefined when `mcp.auth` is off)
   */
  open(
    headers: IncomingHeaders,
    signal: CallCancellation,
    caller?: CallerIdentity,
    server?: string,
  ): HttpAnswer | Promise<HttpAnswer> {
    const stated = header(headers, 'mcp-protocol-version');
    const sessionId = this.sessions.sealed ? header(headers, 'mcp-session-id') : undefined;
    if (sessionId === undefined || (stated !== undefined && isModernVersion(stated)))
      // the same answer as before GET streams existed (and as DELETE gets)
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
    const opened = this.sessions.openFor(sessionId, caller);
    // a session its client ended (DELETE /mcp) is unknown from then on, as the spec says
    const live = this.ended === null ? opened : this.ended.unlessEnded(opened, sessionId);
    const answer = (claims: SessionClaims | undefined): HttpAnswer =>
      claims === undefined
        ? legacyTransportError(GatewayErrorCode.SessionNotFound, 'Session not found')
        : this.stream(headers, signal, claims.expiresAt, sessionId, caller, server);
    return live instanceof Promise ? live.then(answer) : answer(live);
  }

  /** The stream of a session that opened for its caller, or the refusal of a cap reached. */
  private stream(
    headers: IncomingHeaders,
    signal: CallCancellation,
    expiresAt: number,
    sessionId: string,
    caller: CallerIdentity | undefined,
    server: string | undefined,
  ): HttpAnswer {
    if (!acceptsEventStream(header(headers, 'accept')))
      return legacyTransportError(
        GatewayErrorCode.NotAcceptable,
        'Not Acceptable: the GET stream is text/event-stream; the client must accept it',
      );
    // list changes are told as the caller's grant (`mcp.access`) sees them, and on a virtual
    // server's path as its view does (docs/operations.md §16)
    const granted = this.resourceServer.policy.accessFor(caller);
    const access = this.servers?.narrow(granted, server) ?? granted;
    const session = new SessionStream(
      this.hub.newStream(),
      this.capabilities,
      (s) => this.hub.remove(s),
      access,
      sessionId,
    );
    // the Authorization value that opened it is checked again while it is open (NotificationHub)
    // ... and it ends when the session id expires, as the session's subscriptions do
    const room = this.hub.add(session, caller, headers.authorization, expiresAt * 1000);
    if (room === 'replica_limit')
      return messageAnswer(
        503,
        errorEnvelope(
          null,
          JsonRpcCode.ServerError,
          'Service Unavailable: too many notification streams are open',
        ),
        'json',
        { 'retry-after': '5' },
      );
    if (room === 'caller_limit')
      return messageAnswer(
        429,
        errorEnvelope(
          null,
          JsonRpcCode.ServerError,
          'Too Many Requests: this caller has as many notification streams open as it may (mcp.listen.maxStreamsPerCaller)',
        ),
        'json',
        { 'retry-after': '5' },
      );
    if (signal.aborted) session.close();
    else signal.onAbort(() => session.close());
    return streamAnswer(session.stream);
  }
}
