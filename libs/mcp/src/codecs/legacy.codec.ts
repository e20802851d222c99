import { Inject, Injectable, Logger } from '@nestjs/common';
import { DEFAULT_UNSTATED_VERSION, LEGACY_PROTOCOL_VERSIONS, methodRow } from '@app/wire';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { loggedCallerText } from '@app/observability';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { errorHeaders, legacyWireError } from '../errors/wire-errors';
import { MethodDispatcher } from '../handlers/method-dispatcher';
import {
  PreSerialized,
  SerializedResult,
  SessionOpened,
  StreamedResult,
  type MethodContext,
  type MethodResult,
} from '../methods/method-handler';
import { UpstreamRouter } from '../relay/upstream-router';
import { LegacyInputBridge } from '../mrtr/legacy-input-bridge';
import { refusedAnswer } from '../relay/answer-binding';
import { AnswerStream } from '../answers/answer-stream';
import { streamWhenRelayed } from './relay-answer';
import {
  ACCEPTED,
  acceptsEventStream,
  errorEnvelope,
  header,
  messageAnswer,
  resultEnvelope,
  streamAnswer,
  type HttpAnswer,
  type HttpExchange,
  type ResponseFormat,
} from '../answers/http-answer';
import { InFlightRequests } from '../answers/in-flight-requests';
import { idKey, type InboundMessage, type JsonRpcId } from '../jsonrpc/jsonrpc.types';
import { SessionTokenService } from '../session/session-token.service';
import { EndedSessions } from '../session/ended-sessions';

/**
 * The 2025 era (2025-11-25, 2025-06-18, 2025-03-26): `initialize` mints a sealed
 * Mcp-Session-Id, later requests are checked against it, and errors take the legacy wire
 * form. Requests without a session id are served too (as a stateless legacy server would),
 * so a client that never initializes still works; a session id that does not open is 404,
 * which tells the client to initialize again. In stateless mode (no MCP_SESSION_KEYS outside
 * the local profile) initialize issues no session id and any session id sent is ignored.
 */
@Injectable()
export class LegacyCodec {
  private readonly logger = new Logger('Mcp');
  /** Relayed messages an SSE answer may hold for a client that does not read (AnswerStream). */
  private readonly maxQueuedBytes: number;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly dispatcher: MethodDispatcher,
    private readonly sessions: SessionTokenService,
    private readonly inFlight: InFlightRequests,
    private readonly upstreams: UpstreamRouter,
    private readonly bridge: LegacyInputBridge,
    private readonly ended: EndedSessions,
  ) {
    this.maxQueuedBytes = config.mcp.listen.maxQueuedBytes;
  }

  async handle(
    exchange: HttpExchange,
    message: InboundMessage,
    format: ResponseFormat,
  ): Promise<HttpAnswer> {
    switch (message.kind) {
      case 'parse-error':
        return this.error(
          null,
          new GatewayError(GatewayErrorCode.ParseError, `Parse error: ${message.reason}`),
          format,
        );
      case 'batch':
        return this.error(
          null,
          new GatewayError(
            GatewayErrorCode.InvalidRequest,
            'Invalid Request: JSON-RPC batches are not supported (removed in MCP 2025-06-18)',
          ),
          format,
        );
      case 'invalid-request':
        return this.error(
          message.id,
          new GatewayError(GatewayErrorCode.InvalidRequest, `Invalid Request: ${message.reason}`),
          format,
        );
      case 'notification':
      case 'response':
        // a notification or a response (an answer to a relayed request) on a session is that
        // session's caller's (notifications/cancelled aborts one of its calls, an answer goes
        // on to an upstream): one on a session that does not open for this caller is 404, as a
        // request there is, and nothing of it goes further (docs/security.md "Sessions and
        // notification streams"); an unsupported MCP-Protocol-Version is 400 on every POST, as
        // on a request (MCP 2025-11-25 transports, "Protocol Version Header")
        {
          const refusal = this.versionRefusal(exchange, null, format);
          if (refusal !== undefined) return refusal;
        }
        if (!(await this.sessionOpensFor(exchange)))
          return this.error(
            null,
            new GatewayError(GatewayErrorCode.SessionNotFound, 'Session not found'),
            format,
          );
        if (message.kind === 'response') return this.response(exchange, message.message);
        if (message.method === 'notifications/cancelled') this.cancel(exchange, message.params);
        return ACCEPTED;
      case 'invalid-params':
        return this.error(
          message.id,
          new GatewayError(GatewayErrorCode.InvalidParams, `Invalid params: ${message.reason}`),
          format,
        );
      case 'request':
        return this.request(exchange, message, format);
    }
  }

  /**
   * 400 for an MCP-Protocol-Version header that names no 2025-era version this gateway speaks
   * (MCP 2025-11-25 transports, "Protocol Version Header"), on a request (but initialize,
   * whose version is in its params), a notification or a response alike; undefined otherwise.
   */
  private versionRefusal(
    exchange: HttpExchange,
    id: JsonRpcId | null,
    format: ResponseFormat,
  ): HttpAnswer | undefined {
    const stated = header(exchange.headers, 'mcp-protocol-version');
    if (stated === undefined || (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(stated))
      return undefined;
    return this.error(
      id,
      new GatewayError(
        GatewayErrorCode.UnsupportedProtocolVersion,
        `Bad Request: Unsupported protocol version: ${stated.slice(0, 40)} (supported versions: ${LEGACY_PROTOCOL_VERSIONS.join(', ')})`,
      ),
      format,
    );
  }

  /**
   * The client's answer to a request relayed from an upstream goes back to it (docs/operations.md §10, "Relaying");
   * an answer to a request bridged from a 2026 upstream's input_required (docs/operations.md §11, "Multi round-trip") goes to
   * the call that waits for it. Only the caller (and grant) the request was put to may answer
   * it, before its id expires (docs/security.md "Answers to relayed requests").
   */
  private async response(
    exchange: HttpExchange,
    message: Extract<InboundMessage, { kind: 'response' }>['message'],
  ): Promise<HttpAnswer> {
    if (message === undefined) return ACCEPTED;
    // the session opened for this caller and was not ended (sessionOpensFor): an answer belongs
    // to the session its request was put to (answer-binding.ts)
    const sessionId = this.sessions.sealed ? header(exchange.headers, 'mcp-session-id') : undefined;
    const context: MethodContext = {
      protocolVersion: '',
      headers: exchange.headers,
      rawBody: '',
      caller: exchange.caller,
      access: exchange.access,
      ...(sessionId === undefined ? {} : { sessionId }),
    };
    let delivery = await this.bridge.deliverAnswer(message, context);
    if (delivery === 'not-ours') delivery = await this.upstreams.deliverAnswer(message, context);
    return refusedAnswer(delivery) ?? ACCEPTED;
  }

  private async request(
    exchange: HttpExchange,
    message: Extract<InboundMessage, { kind: 'request' }>,
    format: ResponseFormat,
  ): Promise<HttpAnswer> {
    const { id, method, params } = message;
    const row = methodRow(method);
    let protocolVersion = DEFAULT_UNSTATED_VERSION;
    let sessionId: string | undefined;
    let clientCapabilities: Readonly<Record<string, unknown>> | undefined;
    let sessionExpiresAtMs: number | undefined;
    // initialize opens the session: there is none to check yet, and the version it asks for
    // is in its params (InitializeHandler)
    if (row?.opensSession !== true) {
      const refusal = this.versionRefusal(exchange, id, format);
      if (refusal !== undefined) return refusal;
      const stated = header(exchange.headers, 'mcp-protocol-version');
      protocolVersion = stated ?? DEFAULT_UNSTATED_VERSION;
      // Stateless mode issues no session id, so it cannot tell one of its own from any other:
      // like the SDKs' stateless servers, it ignores the header (and an id a sealed replica
      // issued before a rollout keeps working) instead of sending clients into a re-initialize.
      sessionId = this.sessions.sealed ? header(exchange.headers, 'mcp-session-id') : undefined;
      if (sessionId !== undefined) {
        // a session sealed for another caller is not this caller's: 404, it initializes its own
        // ended by its client (DELETE /mcp): unknown from then on, as the spec says; awaited
        // only when Redis is asked (no tick more on the hot path)
        const live = this.ended.unlessEnded(
          this.sessions.openFor(sessionId, exchange.caller),
          sessionId,
        );
        const claims = live instanceof Promise ? await live : live;
        if (claims === undefined) {
          return this.error(
            id,
            new GatewayError(GatewayErrorCode.SessionNotFound, 'Session not found'),
            format,
          );
        }
        protocolVersion = stated ?? claims.protocolVersion;
        clientCapabilities = claims.clientCapabilities;
        sessionExpiresAtMs = claims.expiresAt * 1000;
      }
    }
    const { call } = exchange;
    // A call may relay an upstream's notifications and requests before its result: on an SSE
    // answer that starts with the first of them (docs/operations.md §10 "Relaying"); never for a
    // JSON-only client.
    // a method of the 2026 era only (the Tasks extension's tasks/*: wire notes §1.2) is unknown here
    if (row?.legacy === false)
      return this.error(
        id,
        new GatewayError(
          GatewayErrorCode.MethodNotFound,
          `Method not found: ${method.slice(0, 128)} (a method of protocol revision 2026-07-28)`,
        ),
        format,
      );
    const prepared = this.dispatcher.prepare(method, params, exchange.access);
    const stream =
      prepared.mayRelay && acceptsEventStream(header(exchange.headers, 'accept'))
        ? new AnswerStream(this.maxQueuedBytes)
        : undefined;
    const context: MethodContext = {
      protocolVersion,
      id,
      headers: exchange.headers,
      rawBody: exchange.body ?? '', // a request message implies a decoded body
      signal: call?.controller,
      relay: stream === undefined ? undefined : (m) => stream.push(JSON.stringify(m)),
      clientCapabilities,
      // opened above for this caller, or undefined
      sessionId,
      sessionExpiresAtMs,
      caller: exchange.caller,
      access: exchange.access,
      prepared,
      credential: exchange.credential,
      server: exchange.server,
    };
    const key =
      call === undefined
        ? undefined
        : this.inFlight.keyOf(sessionId, exchange.caller, call.connectionId, idKey(id));
    // by its session too: the session's end ends it (SessionEnding, InFlightRequests.endSession)
    if (key !== undefined && call !== undefined)
      this.inFlight.register(key, call.controller, sessionId);
    const unregister = (): void => {
      if (key !== undefined && call !== undefined)
        this.inFlight.unregister(key, call.controller, sessionId);
    };
    const answer = this.dispatcher.dispatch(method, params, context).then(
      (result) => {
        // a result that cannot be written (a RangeError of a value nested too deep) is this
        // request's -32603, with its id, never a bare 500
        try {
          return this.resultAnswer(id, result, format);
        } catch (err) {
          return this.error(id, err, format, exchange.headers);
        }
      },
      (err: unknown) => this.error(id, err, format, exchange.headers),
    );
    // a request the client cancelled gets no response where an event stream can end without one
    return streamWhenRelayed(answer, stream, unregister, call?.controller, exchange.headers);
  }

  private resultAnswer(id: JsonRpcId, result: MethodResult, format: ResponseFormat): HttpAnswer {
    if (result instanceof SessionOpened)
      return messageAnswer(
        200,
        resultEnvelope(id, JSON.stringify(result.result)),
        format,
        // Stateless mode: no session id at all (the spec lets a server issue none).
        result.sessionId === undefined ? {} : { 'mcp-session-id': result.sessionId },
      );
    if (result instanceof StreamedResult) return streamAnswer(result.stream);
    const json =
      result instanceof SerializedResult
        ? result.json
        : result instanceof PreSerialized
          ? result.parts
          : JSON.stringify(result);
    return messageAnswer(200, resultEnvelope(id, json), format);
  }

  /**
   * No session id (or stateless mode), or one that opens for this exchange's caller and was not
   * ended (docs/operations.md §9 "Ending a session").
   */
  private async sessionOpensFor(exchange: HttpExchange): Promise<boolean> {
    const sessionId = this.sessions.sealed ? header(exchange.headers, 'mcp-session-id') : undefined;
    if (sessionId === undefined) return true;
    return (
      (await this.ended.unlessEnded(
        this.sessions.openFor(sessionId, exchange.caller),
        sessionId,
      )) !== undefined
    );
  }

  /**
   * notifications/cancelled (MCP lifecycle, cancellation): aborts the named request of the
   * same session, or of the same connection without one. Unknown, finished or malformed
   * requestIds are ignored, as the spec allows.
   */
  private cancel(exchange: HttpExchange, params: unknown): void {
    if (exchange.call === undefined || typeof params !== 'object' || params === null) return;
    const requestId = (params as { requestId?: unknown }).requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    // the session is this caller's (sessionOpensFor); in stateless mode the header names none
    const sessionId = this.sessions.sealed ? header(exchange.headers, 'mcp-session-id') : undefined;
    this.inFlight.cancel(
      this.inFlight.keyOf(sessionId, exchange.caller, exchange.call.connectionId, idKey(requestId)),
    );
  }

  private error(
    id: JsonRpcId | null,
    err: unknown,
    format: ResponseFormat,
    headers?: HttpExchange['headers'],
  ): HttpAnswer {
    const gatewayError =
      err instanceof GatewayError
        ? err
        : new GatewayError(GatewayErrorCode.Internal, 'Internal error');
    if (!(err instanceof GatewayError)) {
      this.logger.error({
        msg: `Unexpected failure while handling a request: ${err instanceof Error ? (err.stack ?? err.name) : typeof err}`,
        requestId:
          headers === undefined ? undefined : loggedCallerText(header(headers, 'x-request-id')),
        guid: headers === undefined ? undefined : loggedCallerText(header(headers, 'guid')),
      });
    }
    if (gatewayError instanceof ForwardedError)
      return messageAnswer(
        200,
        errorEnvelope(id, gatewayError.rpcCode, gatewayError.message, gatewayError.rpcData),
        format,
      );
    const wire = legacyWireError(gatewayError.code);
    return messageAnswer(
      wire.httpStatus,
      errorEnvelope(id, wire.code, gatewayError.message, gatewayError.data),
      format,
      errorHeaders(gatewayError),
    );
  }
}
