import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  decodeHeaderValue,
  JsonRpcCode,
  MetaKey,
  methodRow,
  missingClientCapabilities,
  MODERN_PROTOCOL_VERSIONS,
} from '@app/wire';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import type { CallerAccess } from '@app/identity';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { errorHeaders, modernForwardedError, modernWireError } from '../errors/wire-errors';
import { MethodDispatcher } from '../handlers/method-dispatcher';
import {
  PreSerialized,
  SerializedResult,
  StreamedResult,
  type MethodContext,
  type MethodResult,
  type PreparedRequest,
  type HeaderMismatch,
} from '../methods/method-handler';
import { LiveListResult } from '../handlers/live-list-result';
import { AnswerStream } from '../answers/answer-stream';
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
  type JsonBody,
} from '../answers/http-answer';
import type { InboundMessage, JsonRpcId } from '../jsonrpc/jsonrpc.types';
import { distinctMembers, withMembers } from '../jsonrpc/raw-member';
import { isFilteredForCaller } from '../handlers/caller-filtered';
import { CacheHintsService, type CacheHints } from './cache-hints';
import { streamWhenRelayed } from './relay-answer';
import { VirtualServers, type ServedIdentity } from '../servers/virtual-servers.service';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The 2026-07-28 era at the front door (docs/operations.md §11): stateless requests that each carry
 * their version and client capabilities in `params._meta`. The codec validates the envelope
 * and the `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers against the body and
 * answers with the spec's status/code pairs (wire notes §1.2), and runs every method of the era
 * through its handler (the same handlers as the 2025 era's), adding `resultType`, the
 * gateway's `serverInfo` and, where the method table says so, cache hints. Errors of the
 * handlers are in-band on 200; an unknown tool is -32602.
 */
@Injectable()
export class ModernCodec {
  private readonly logger = new Logger('Mcp');
  /** Relayed messages an SSE answer may hold for a client that does not read (AnswerStream). */
  private readonly maxQueuedBytes: number;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly dispatcher: MethodDispatcher,
    private readonly cacheHints: CacheHintsService,
    private readonly servers: VirtualServers,
  ) {
    this.maxQueuedBytes = config.mcp.listen.maxQueuedBytes;
  }

  /**
   * @param claim the envelope's protocol version (already known to be modern), or undefined
   *   when the request has no envelope but a modern MCP-Protocol-Version header
   */
  async handle(
    exchange: HttpExchange,
    message: InboundMessage,
    claim: string | undefined,
  ): Promise<HttpAnswer> {
    switch (message.kind) {
      case 'notification':
      case 'response':
        // notifications/cancelled of a closed listen, and the like: accepted (wire notes §1.2)
        return ACCEPTED;
      case 'parse-error':
        return this.error(null, JsonRpcCode.ParseError, `Parse error: ${message.reason}`, 400);
      case 'batch':
        return this.error(
          null,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: JSON-RPC batches may not contain requests for protocol revision 2026-07-28 or later',
          400,
        );
      case 'invalid-request':
        return this.error(
          message.id,
          JsonRpcCode.InvalidRequest,
          `Invalid Request: ${message.reason}`,
          400,
        );
      case 'invalid-params':
        return this.error(
          message.id,
          JsonRpcCode.InvalidParams,
          `Invalid params: ${message.reason}`,
          400,
        );
      case 'request':
        return this.request(exchange, message, claim);
    }
  }

  private async request(
    exchange: HttpExchange,
    message: Extract<InboundMessage, { kind: 'request' }>,
    claim: string | undefined,
  ): Promise<HttpAnswer> {
    const { id, method, params } = message;
    const headers = exchange.headers;
    const stated = header(headers, 'mcp-protocol-version');
    const meta = isRecord(params?._meta) ? params._meta : undefined;
    if (claim === undefined || meta === undefined)
      return this.error(
        id,
        JsonRpcCode.InvalidParams,
        'Invalid params: the request is missing the required per-request envelope key(s): _meta',
        400,
      );
    const clientCapabilities = meta[MetaKey.clientCapabilities];
    if (!isRecord(clientCapabilities))
      return this.error(
        id,
        JsonRpcCode.InvalidParams,
        `Invalid _meta envelope: ${MetaKey.clientCapabilities}: ${clientCapabilities === undefined ? 'missing' : 'must be an object'}`,
        400,
      );
    // a header that names another version than the envelope is a mismatch (-32020), also when
    // the envelope's version is one this gateway does not speak (as the v2 SDK decides)
    if (stated !== undefined && stated !== claim) return this.versionMismatch(id, claim);
    if (!(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(claim))
      return this.error(
        id,
        JsonRpcCode.UnsupportedProtocolVersion,
        `Unsupported protocol version: ${claim.slice(0, 40)}`,
        400,
        {
          supported: MODERN_PROTOCOL_VERSIONS,
          requested: claim,
        },
      );
    const prepared = this.dispatcher.prepare(method, params, exchange.access);
    const mismatch = this.headerMismatch(headers, method, params, claim, stated, prepared);
    if (mismatch !== undefined)
      return this.error(
        id,
        JsonRpcCode.HeaderMismatch,
        `Header mismatch: ${mismatch.reason}`,
        400,
        {
          mismatch: { header: mismatch.header, body: mismatch.body },
        },
      );
    if (methodRow(method)?.modern !== true)
      return this.error(
        id,
        JsonRpcCode.MethodNotFound,
        `Method not found: ${method.slice(0, 128)}`,
        404,
      );
    const call = exchange.call;
    // 2026 responses may carry request-scoped notifications, never requests (wire notes §1.2).
    const stream =
      prepared.mayRelay && acceptsEventStream(header(headers, 'accept'))
        ? new AnswerStream(this.maxQueuedBytes)
        : undefined;
    const context: MethodContext = {
      protocolVersion: claim,
      id,
      headers,
      rawBody: exchange.body ?? '',
      signal: call?.controller,
      relay: stream === undefined ? undefined : (m) => stream.push(JSON.stringify(m)),
      relayRequests: false,
      clientCapabilities,
      caller: exchange.caller,
      access: exchange.access,
      prepared,
      credential: exchange.credential,
      server: exchange.server,
    };
    const answer = this.dispatcher.dispatch(method, params, context).then(
      (result) => {
        // a result that cannot be written (a RangeError of a value nested too deep) is this
        // request's -32603, with its id, never a bare 500
        try {
          return this.result(
            id,
            method,
            result,
            clientCapabilities,
            exchange.access,
            this.servers.identityOf(exchange.server),
          );
        } catch (err) {
          return this.handlerError(id, err);
        }
      },
      (err: unknown) => this.handlerError(id, err),
    );
    return streamWhenRelayed(answer, stream, () => undefined);
  }

  /** A stated MCP-Protocol-Version that differs from the envelope's (-32020). */
  private versionMismatch(id: JsonRpcId, claim: string): HttpAnswer {
    return this.error(
      id,
      JsonRpcCode.HeaderMismatch,
      'Header mismatch: MCP-Protocol-Version differs from _meta protocolVersion',
      400,
      { mismatch: { header: 'MCP-Protocol-Version', body: claim } },
    );
  }

  /** The first header that disagrees with the body, or is missing or malformed (-32020). */
  private headerMismatch(
    headers: HttpExchange['headers'],
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    claim: string,
    stated: string | undefined,
    prepared: PreparedRequest,
  ): HeaderMismatch | undefined {
    // a stated version that differs was answered before (versionMismatch)
    if (stated === undefined)
      return {
        header: 'MCP-Protocol-Version',
        body: claim,
        reason: 'the required MCP-Protocol-Version header is absent',
      };
    const statedMethod = header(headers, 'mcp-method');
    if (statedMethod !== method)
      return {
        header: 'Mcp-Method',
        body: method,
        reason:
          statedMethod === undefined
            ? 'the required Mcp-Method header is absent'
            : 'Mcp-Method differs from the method',
      };
    // only the methods this era serves: another one is 404 -32601 whatever its headers say
    const row = methodRow(method);
    const source = row?.modern === true ? row.mcpName : undefined;
    if (source !== undefined) {
      const bodyName = typeof params?.[source] === 'string' ? params[source] : '';
      const raw = header(headers, 'mcp-name');
      if (raw === undefined)
        return {
          header: 'Mcp-Name',
          body: bodyName,
          reason: 'the required Mcp-Name header is absent',
        };
      const decoded = decodeHeaderValue(raw);
      if (decoded === undefined)
        return {
          header: 'Mcp-Name',
          body: bodyName,
          reason: 'invalid Base64 sentinel in Mcp-Name',
        };
      if (decoded !== bodyName)
        return {
          header: 'Mcp-Name',
          body: bodyName,
          reason: `Mcp-Name differs from params.${source}`,
        };
    }
    // the method's own header checks: Mcp-Param-* for tools/call (MethodHandler.headerMismatch)
    return this.dispatcher.headerMismatch(method, params, headers, prepared);
  }

  /** A handler's result with the 2026 members: resultType, serverInfo, cache hints on lists. */
  private result(
    id: JsonRpcId,
    method: string,
    result: MethodResult,
    clientCapabilities: Readonly<Record<string, unknown>>,
    access: CallerAccess | undefined,
    identity: ServedIdentity,
  ): HttpAnswer {
    // a stream the handler opened (subscriptions/listen) is the answer as it is
    if (result instanceof StreamedResult) return streamAnswer(result.stream);
    // a result built for a restricted caller (docs/operations.md §13 "Access") is private
    const filteredForCaller = isFilteredForCaller(result) || restricted(access);
    let hints =
      methodRow(method)?.cacheHints === true
        ? this.cacheHints.withLive(
            method,
            result instanceof LiveListResult ? result.cacheHints : undefined,
            { filteredForCaller },
          )
        : undefined;
    let body: JsonBody;
    if (result instanceof PreSerialized) {
      // `{"tools":[…]` + … + `}`: the 2026 members go before the closing brace
      const parts = [...result.parts];
      const last = parts.pop();
      const extra =
        `,"resultType":"complete"` +
        (hints === undefined ? '' : `,"ttlMs":${hints.ttlMs},"cacheScope":"${hints.cacheScope}"`) +
        (parts.some((p) => typeof p === 'string' && p.startsWith(',"_meta":'))
          ? ''
          : `,"_meta":${identity.serverInfoMeta}`);
      body = [...parts, extra, last ?? '}'];
    } else {
      // a passed-on upstream result gets the 2026 members too: from its parsed value
      const r =
        result instanceof SerializedResult ? result.value : (result as Record<string, unknown>);
      // input requests for a capability the request did not declare: 400 -32021 (wire notes §4)
      const missing = missingClientCapabilities(r, clientCapabilities);
      if (missing !== undefined)
        return this.error(
          id,
          JsonRpcCode.MissingClientCapability,
          `Missing required client capability: ${Object.keys(missing).join(', ')}`,
          400,
          { requiredCapabilities: missing },
        );
      // resources/read: the owning upstream's own hints, capped; an input_required carries none
      if (method === 'resources/read' && r.resultType !== 'input_required')
        hints = this.cacheHints.forRead(
          (result instanceof SerializedResult ? result.readHints : undefined) ?? r,
          { filteredForCaller },
        );
      const meta = isRecord(r._meta) ? r._meta : {};
      body =
        hints === undefined && r.resultType === undefined && r._meta === undefined
          ? this.withModernMembers(objectText(result, r), identity)
          : (textWithModernMembers(result, r, hints, identity) ??
            JSON.stringify({
              ...r,
              resultType: typeof r.resultType === 'string' ? r.resultType : 'complete',
              ...(hints ?? {}),
              _meta: { ...meta, [MetaKey.serverInfo]: identity.serverInfo },
            }));
    }
    return messageAnswer(200, resultEnvelope(id, body), 'json');
  }

  /**
   * A result serialized without `resultType`, `_meta` or cache hints (a tool's result, most
   * often), with the 2026 members appended: the same members as serializing
   * `{...result, resultType: 'complete', _meta: {serverInfo}}`, without copying the result.
   * `json` is the text of a JSON object with no whitespace around its braces.
   */
  private withModernMembers(json: string, identity: ServedIdentity): string {
    const members = `"resultType":"complete","_meta":${identity.serverInfoMeta}}`;
    return `${json.slice(0, -1)}${json === '{}' ? '' : ','}${members}`;
  }

  private handlerError(id: JsonRpcId, err: unknown): HttpAnswer {
    if (err instanceof ForwardedError) {
      const wire = modernForwardedError(err.rpcCode, err.message, err.upstreamEra);
      return this.error(id, wire.code, wire.message, wire.httpStatus, err.rpcData);
    }
    if (err instanceof GatewayError) {
      const wire = modernWireError(err.code);
      return this.error(id, wire.code, err.message, wire.httpStatus, err.data, errorHeaders(err));
    }
    this.logger.error(
      `Unexpected failure while handling a 2026 request: ${err instanceof Error ? (err.stack ?? err.name) : typeof err}`,
    );
    const wire = modernWireError(GatewayErrorCode.Internal);
    return this.error(id, wire.code, 'Internal error', wire.httpStatus);
  }

  private error(
    id: JsonRpcId | null,
    code: number,
    message: string,
    status: number,
    data?: unknown,
    headers?: Readonly<Record<string, string>>,
  ): HttpAnswer {
    return messageAnswer(status, errorEnvelope(id, code, message, data), 'json', headers);
  }
}

/**
 * Whether the caller's grants (docs/operations.md §13 "Access") leave something out: its answers
 * are its own.
 */
function restricted(access: CallerAccess | undefined): boolean {
  return access !== undefined && !access.all;
}

/**
 * The JSON text of a result object to append the 2026 members to: an upstream's result as the
 * upstream wrote it (a SerializedResult, passed on without a parse-copy-serialize round, as in
 * the 2025 era), when its text is one compact non-empty object; else the value serialized.
 */
function objectText(result: MethodResult, value: Record<string, unknown>): string {
  if (result instanceof SerializedResult) {
    const json = result.json;
    if (json.startsWith('{') && json.endsWith('}') && Object.keys(value).length > 0) return json;
  }
  return JSON.stringify(value);
}

/**
 * An upstream's result text (a SerializedResult) with the 2026 members set as the serialization in
 * `result` would set them — resultType, the cache hints, the gateway's serverInfo in `_meta` —
 * and every other member as the upstream wrote it (docs/operations.md §10 "Routing"). Undefined
 * for any other result, or a text that cannot be cut so (a name written twice): the value is
 * serialized then.
 */
function textWithModernMembers(
  result: MethodResult,
  value: Record<string, unknown>,
  hints: CacheHints | undefined,
  identity: ServedIdentity,
): string | undefined {
  if (!(result instanceof SerializedResult)) return undefined;
  const json = result.json;
  const members = distinctMembers(json);
  if (members === undefined) return undefined;
  const updates = new Map<string, string>([
    [
      'resultType',
      JSON.stringify(typeof value.resultType === 'string' ? value.resultType : 'complete'),
    ],
  ]);
  if (hints !== undefined) {
    updates.set('ttlMs', JSON.stringify(hints.ttlMs));
    updates.set('cacheScope', JSON.stringify(hints.cacheScope));
  }
  const metaMember = isRecord(value._meta) ? members.find((m) => m.name === '_meta') : undefined;
  const meta =
    metaMember === undefined
      ? identity.serverInfoMeta
      : withMembers(
          json.slice(metaMember.valueStart, metaMember.end),
          new Map([[MetaKey.serverInfo, JSON.stringify(identity.serverInfo)]]),
        );
  if (meta === undefined) return undefined;
  updates.set('_meta', meta);
  return withMembers(json, updates, members);
}
