import { Inject, Injectable, Optional } from '@nestjs/common';
import { isModernVersion, JsonRpcCode, MetaKey, MODERN_PROTOCOL_VERSIONS } from '@app/wire';
import { VirtualServers } from '../servers/virtual-servers.service';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import type { IncomingHeaders } from '@app/execution';
import { ResourceServer, type AuthOutcome, type CallerIdentity } from '@app/identity';
import { sampleRoot, tracingOn } from '@app/observability';
import { authRefusal } from './auth-answers';
import { LegacyCodec } from '../codecs/legacy.codec';
import { ModernCodec } from '../codecs/modern.codec';
import { GatewayErrorCode } from '../errors/gateway-error';
import {
  errorEnvelope,
  header,
  type HttpAnswer,
  type HttpExchange,
  legacyTransportError,
  messageAnswer,
  negotiateFormat,
} from '../answers/http-answer';
import type { InboundMessage, JsonRpcId } from '../jsonrpc/jsonrpc.types';
import { parseMessage } from '../jsonrpc/parse-message';
import { epochNow, traceRequest, traceUnread, type RequestTiming } from './request-span';

/** The envelope claim of a message: `params._meta["io.modelcontextprotocol/protocolVersion"]`. */
function claimOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const params = (value as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  return (meta as Record<string, unknown>)[MetaKey.protocolVersion];
}

/** The classifier's own refusal of a POST: 400 with a JSON-RPC error. */
function refused(id: JsonRpcId | null, code: JsonRpcCode, message: string, data?: unknown): Era {
  return {
    era: 'refused',
    answer: messageAnswer(400, errorEnvelope(id, code, message, data), 'json'),
  };
}

/** Which codec serves a POST, or the refusal the classifier answers itself. */
type Era =
  | { readonly era: 'legacy' }
  | { readonly era: 'modern'; readonly claim: string | undefined }
  | { readonly era: 'refused'; readonly answer: HttpAnswer };

/**
 * Streamable HTTP on /mcp: checks what every POST must satisfy whatever its era (the media
 * type), classifies the body by protocol era exactly as wire notes §1.4 (the dual-era
 * classifier of the v2 SDK), and hands it to that era's codec: LegacyCodec (2025 sessions)
 * or ModernCodec (2026-07-28, stateless), both around the same method handlers.
 */
@Injectable()
export class McpTransport {
  private readonly modernEra: boolean;

  constructor(
    private readonly legacy: LegacyCodec,
    private readonly modern: ModernCodec,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly resourceServer: ResourceServer,
    @Optional() @Inject(VirtualServers) private readonly servers: VirtualServers | null = null,
  ) {
    this.modernEra = config.mcp.http.modernEra;
  }

  /**
   * Serves one POST: the caller's token first (docs/operations.md §13; every request, both eras,
   * any session: 401/403 before anything else is read), then the era's codec.
   */
  post(exchange: HttpExchange, decided?: AuthOutcome): Promise<HttpAnswer> {
    // a request with no trace context of its caller whose trace is not sampled goes the
    // untraced way at once (one random number: docs/operations.md §3 "Traces")
    if (tracingOn()) {
      const traces = callerTraces(exchange);
      if (traces || sampleRoot()) return this.postTraced(exchange, !traces, decided);
    }
    if (!this.resourceServer.checksRequests) return this.serve(exchange);
    if (decided !== undefined) return this.serveAs(exchange, decided);
    const authorization = exchange.headers.authorization;
    // a token verified before is decided without a promise of its own (the common case)
    const remembered = this.resourceServer.authenticateRemembered(authorization);
    if (remembered !== undefined) return this.serveAs(exchange, remembered);
    return this.resourceServer
      .authenticate(authorization)
      .then((outcome) => this.serveAs(exchange, outcome));
  }

  /**
   * GET and DELETE on /mcp: authenticated exactly as a POST is (the same outcome and the same
   * 401/403 with WWW-Authenticate, before anything of the request is looked at; DESIGN "Side
   * paths keep the main path's rules"), then `serve` for the caller (undefined: auth off).
   */
  authenticated(
    headers: IncomingHeaders,
    serve: (caller: CallerIdentity | undefined) => HttpAnswer | Promise<HttpAnswer>,
    server?: string,
  ): Promise<HttpAnswer> {
    if (!this.resourceServer.checksRequests) return Promise.resolve(serve(undefined));
    const decide = (checked: AuthOutcome): HttpAnswer | Promise<HttpAnswer> => {
      const outcome = this.resourceServer.refusalBeside(headers) ?? checked;
      switch (outcome.kind) {
        case 'authenticated':
          return this.resourceServer.servesOn(outcome.caller, server)
            ? serve(outcome.caller)
            : this.otherPath(server);
        case 'anonymous':
          return serve(undefined);
        case 'refused':
          return authRefusal(outcome, this.resourceServer.metadataUrlFor(server));
      }
    };
    const remembered = this.resourceServer.authenticateRemembered(headers.authorization);
    if (remembered !== undefined) return Promise.resolve(decide(remembered));
    return this.resourceServer.authenticate(headers.authorization).then(decide);
  }

  /** `post` with a span per request (docs/operations.md §3 "Traces"); the token check timed. */
  private postTraced(
    exchange: HttpExchange,
    rootSampled: boolean,
    decided: AuthOutcome | undefined,
  ): Promise<HttpAnswer> {
    const started = epochNow();
    if (!this.resourceServer.checksRequests) return this.serve(exchange, { started, rootSampled });
    // checked before the body was read (McpExchanges.authenticateFirst): no time of its own here
    if (decided !== undefined)
      return this.serveAs(exchange, decided, { started, authEnded: started, rootSampled });
    const authorization = exchange.headers.authorization;
    const remembered = this.resourceServer.authenticateRemembered(authorization);
    if (remembered !== undefined)
      return this.serveAs(exchange, remembered, { started, authEnded: epochNow(), rootSampled });
    return this.resourceServer
      .authenticate(authorization)
      .then((outcome) =>
        this.serveAs(exchange, outcome, { started, authEnded: epochNow(), rootSampled }),
      );
  }

  /**
   * The answer that refuses a request with this auth outcome on this path — 401/403 for a
   * refused token or the admin credential beside Authorization, 401 for a token issued for
   * another path — or undefined when it may be served. Decided by the headers alone, so both
   * listeners ask it before they read a POST's body (McpExchanges.authenticateFirst).
   */
  refusalFor(
    headers: IncomingHeaders,
    outcome: AuthOutcome,
    server: string | undefined,
  ): HttpAnswer | undefined {
    const checked = this.resourceServer.refusalBeside(headers) ?? outcome;
    if (checked.kind === 'refused')
      return authRefusal(checked, this.resourceServer.metadataUrlFor(server));
    if (checked.kind === 'authenticated' && !this.resourceServer.servesOn(checked.caller, server))
      return this.otherPath(server);
    return undefined;
  }

  /** The request as the auth outcome allows: refused (401/403), or served for the caller. */
  private serveAs(
    exchange: HttpExchange,
    outcome: AuthOutcome,
    timing?: RequestTiming,
  ): Promise<HttpAnswer> {
    const refusal = this.refusalFor(exchange.headers, outcome, exchange.server);
    if (refusal !== undefined) return unread(exchange, refusal, timing, true);
    if (outcome.kind !== 'authenticated') return this.serve(exchange, timing);
    // every member named (a spread of the exchange costs more on this per-request path)
    return this.serve(
      {
        headers: this.resourceServer.headersToPassOn(exchange.headers, outcome.caller),
        body: exchange.body,
        call: exchange.call,
        caller: outcome.caller,
        access: this.resourceServer.policy.accessFor(outcome.caller),
        credential: exchange.headers.authorization,
        server: exchange.server,
      },
      timing,
    );
  }

  /**
   * 401 for a token issued for another path of this gateway: a virtual server's path URL names
   * that path only (RFC 8707; docs/operations.md §16 "Virtual servers").
   */
  private otherPath(server: string | undefined): HttpAnswer {
    return authRefusal(
      {
        kind: 'refused',
        status: 401,
        error: 'invalid_token',
        description: 'The access token was issued for another path of this gateway',
      },
      this.resourceServer.metadataUrlFor(server),
    );
  }

  /** @param timing set when the request is traced (RequestTiming) */
  private serve(given: HttpExchange, timing?: RequestTiming): Promise<HttpAnswer> {
    // on a virtual server's path the caller's grant is narrowed to its view (docs/operations.md §16)
    const exchange =
      given.server === undefined || this.servers === null
        ? given
        : { ...given, access: this.servers.narrow(given.access, given.server) };
    const contentType = header(exchange.headers, 'content-type')
      ?.split(';', 1)[0]
      ?.trim()
      .toLowerCase();
    if (contentType !== 'application/json') {
      return unread(
        exchange,
        legacyTransportError(
          GatewayErrorCode.UnsupportedMediaType,
          'Unsupported Media Type: Content-Type must be application/json',
        ),
        timing,
        false,
      );
    }
    // the body is read as it came: a content coding would be taken for the JSON itself
    // (RFC 9110 §15.5.16: 415, naming the codings accepted)
    const coding = header(exchange.headers, 'content-encoding');
    if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
      return unread(
        exchange,
        legacyTransportError(
          GatewayErrorCode.UnsupportedMediaType,
          `Unsupported Media Type: Content-Encoding ${coding.slice(0, 40)} is not accepted; send the body without a content coding`,
          { 'accept-encoding': 'identity' },
        ),
        timing,
        false,
      );
    }
    const parsed = parseMessage(exchange.body);
    if (timing === undefined) return this.dispatch(exchange, parsed.message, parsed.value);
    const claim = claimOf(parsed.value);
    return traceRequest(
      exchange,
      parsed,
      {
        modern: typeof claim === 'string' && isModernVersion(claim),
        version:
          typeof claim === 'string' ? claim : header(exchange.headers, 'mcp-protocol-version'),
      },
      timing,
      () => this.dispatch(exchange, parsed.message, parsed.value),
    );
  }

  private async dispatch(
    exchange: HttpExchange,
    message: InboundMessage,
    value: unknown,
  ): Promise<HttpAnswer> {
    const era: Era = this.modernEra ? this.classify(exchange, message, value) : { era: 'legacy' };
    if (era.era === 'refused') return era.answer;
    // The v2 SDK does not check Accept on the modern path (wire notes §1.2): neither does this.
    if (era.era === 'modern') return this.modern.handle(exchange, message, era.claim);
    const format = negotiateFormat(header(exchange.headers, 'accept'));
    if (format === undefined) {
      return legacyTransportError(
        GatewayErrorCode.NotAcceptable,
        'Not Acceptable: the client must accept application/json or text/event-stream',
      );
    }
    return this.legacy.handle(exchange, message, format);
  }

  /** wire notes §1.4, steps 2–8 (GET and DELETE never reach here). */
  private classify(exchange: HttpExchange, message: InboundMessage, value: unknown): Era {
    const stated = header(exchange.headers, 'mcp-protocol-version');
    const modernHeader = stated !== undefined && isModernVersion(stated);
    if (message.kind === 'batch') {
      const modernElement =
        Array.isArray(value) &&
        value.some((element) => {
          const claim = claimOf(element);
          return typeof claim === 'string' && isModernVersion(claim);
        });
      return modernElement ? { era: 'modern', claim: undefined } : { era: 'legacy' };
    }
    if (message.kind === 'response') return { era: 'legacy' };
    if (message.kind === 'parse-error')
      return modernHeader ? { era: 'modern', claim: undefined } : { era: 'legacy' };
    const claim = claimOf(value);
    const isRequest = message.kind === 'request' || message.kind === 'invalid-params';
    const id = 'id' in message ? message.id : null;
    if (typeof claim === 'string') {
      if (isModernVersion(claim)) return { era: 'modern', claim };
      // A header that names another version than the envelope: the mismatch wins (-32020),
      // whichever versions they name (as the v2 SDK's classifier decides).
      if (stated !== undefined && stated !== claim)
        return refused(
          id,
          JsonRpcCode.HeaderMismatch,
          'Header mismatch: MCP-Protocol-Version differs from _meta protocolVersion',
          { mismatch: { header: 'MCP-Protocol-Version', body: claim } },
        );
      // An envelope claiming a legacy version: envelopes are honoured for modern versions only.
      return refused(
        id,
        JsonRpcCode.UnsupportedProtocolVersion,
        `Unsupported protocol version: ${claim.slice(0, 40)}`,
        { supported: MODERN_PROTOCOL_VERSIONS, requested: claim },
      );
    }
    if (claim !== undefined)
      return refused(
        id,
        JsonRpcCode.InvalidParams,
        `Invalid _meta envelope: ${MetaKey.protocolVersion} must be a string`,
      );
    if (!modernHeader) return { era: 'legacy' };
    if (message.kind === 'notification') return { era: 'modern', claim: undefined };
    if (isRequest && message.method === 'initialize')
      return refused(
        message.id,
        JsonRpcCode.HeaderMismatch,
        'Header mismatch: MCP-Protocol-Version names 2026-07-28 or later but initialize carries no envelope',
        { mismatch: { header: 'MCP-Protocol-Version', body: 'initialize' } },
      );
    // A modern header without an envelope: 400 -32602 (envelope missing), never legacy.
    return { era: 'modern', claim: undefined };
  }
}

/**
 * Whether the caller may have sent a trace context: the `traceparent` header, or the word in the
 * body (`params._meta.traceparent`, SEP-414; parsed later, with the body).
 */
/** An answer given before the body was read; in a span of its own when the request is traced. */
function unread(
  exchange: HttpExchange,
  answer: HttpAnswer,
  timing: RequestTiming | undefined,
  refused: boolean,
): Promise<HttpAnswer> {
  return timing === undefined
    ? Promise.resolve(answer)
    : traceUnread(exchange, timing, answer, refused);
}

/**
 * Whether the caller may have sent a trace context: the header, or `traceparent` in the body
 * (`_meta`, SEP-414) — as written, or behind a `\u` escape, which JSON reads as the same key.
 * A body that only looks so takes the traced path, where the parsed `_meta` decides.
 */
function callerTraces(exchange: HttpExchange): boolean {
  const body = exchange.body;
  return (
    exchange.headers.traceparent !== undefined ||
    (typeof body === 'string' && (body.includes('traceparent') || body.includes('\\u')))
  );
}
