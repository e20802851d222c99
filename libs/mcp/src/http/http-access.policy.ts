import { Inject, Injectable } from '@nestjs/common';
import {
  compileAccessList,
  GATEWAY_CONFIG,
  listAllows,
  parseHost,
  parseOrigin,
  type AccessList,
  type ConfigProblem,
  type GatewayConfig,
} from '@app/config';
import { FORWARDED_CALLER_HEADERS, type IncomingHeaders } from '@app/execution';
import { JsonRpcCode, viaNamesGateway } from '@app/wire';
import { GatewayErrorCode } from '../errors/gateway-error';
import { legacyWireError } from '../errors/wire-errors';
import { errorEnvelope, type HttpAnswer } from '../answers/http-answer';

/** What the /mcp listener does with a request after the Origin and Host checks. */
export type AccessDecision =
  /** Serve it; `cors` (allowed Origin only) goes onto every answer. */
  | { readonly kind: 'pass'; readonly cors?: Readonly<Record<string, string>> }
  /** Answer this 403 and nothing else: no tool runs, no CORS header. */
  | { readonly kind: 'refuse'; readonly answer: HttpAnswer };

/** Every request without Origin, when Host is not checked: one shared object, nothing allocated. */
const PASS: AccessDecision = { kind: 'pass' };

/** Methods a browser may send to /mcp (GET and DELETE are answered 405, but readably). */
const ALLOW_METHODS = 'POST, GET, DELETE, OPTIONS';
/**
 * Request headers a browser may send: the Streamable HTTP ones, Authorization, and the caller
 * headers a tool call forwards to its Tool Service (contract §10).
 */
const ALLOW_HEADERS = [
  'content-type',
  'accept',
  'authorization',
  'mcp-session-id',
  'mcp-protocol-version',
  // 2026-07-28 request metadata (wire notes §1.2); Mcp-Param-* names depend on the tool
  'mcp-method',
  'mcp-name',
  'last-event-id',
  ...FORWARDED_CALLER_HEADERS.filter((h) => h !== 'mcp-session-id'),
].join(', ');
/** How long a browser may cache a preflight answer, in seconds (Chromium caps it at 7200). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

function forbidden(message: string): AccessDecision {
  const wire = legacyWireError(GatewayErrorCode.Forbidden);
  return {
    kind: 'refuse',
    answer: {
      status: wire.httpStatus,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: errorEnvelope(null, wire.code, message),
    },
  };
}

const ORIGIN_REFUSED = forbidden(
  'Forbidden: this Origin may not call the MCP endpoint (mcp.http.allowedOrigins)',
);
const HOST_REFUSED = forbidden(
  'Forbidden: the Host header names a host this gateway does not serve (mcp.http.allowedHosts)',
);
/**
 * 508 Loop Detected (RFC 5842 §7.2) for a request a gateway of this identity sent (its `Via`
 * entry, gatewayVia): an upstream that is this gateway, which would otherwise republish its own
 * catalog under the upstream's prefix at every round, one level deeper each time.
 */
const LOOP_REFUSED: AccessDecision = {
  kind: 'refuse',
  answer: {
    status: 508,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: errorEnvelope(
      null,
      JsonRpcCode.InvalidRequest,
      'Loop Detected: this request came from this gateway (its Via header names mcp.identity): an upstream of the gateway is the gateway itself',
    ),
  },
};

/**
 * Origin and Host checks of /mcp (MCP Streamable HTTP "Security Warning": validate Origin,
 * 403 when invalid; DNS rebinding) and the CORS answers that go with an allowed Origin.
 * Lists come from `mcp.http` (validated at boot; syntax in libs/config http-access-patterns).
 * A request without Origin while Host is unchecked costs two property reads.
 */
@Injectable()
export class HttpAccessPolicy {
  private readonly origins: AccessList;
  /** undefined: Host is not checked (no allowedHosts). */
  private readonly hosts?: AccessList;

  private readonly identity: string;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.identity = config.mcp.identity;
    const http = config.mcp.http;
    // Validated at boot (loadGatewayConfig); compiling again cannot find a problem.
    const ignored: ConfigProblem[] = [];
    this.origins = compileAccessList(http.allowedOrigins, 'origin', '', ignored);
    if (http.allowedHosts.length > 0) {
      this.hosts = compileAccessList(http.allowedHosts, 'host', '', ignored);
    }
  }

  /** Decides a request by its Host, Origin and Via headers. */
  admit(headers: IncomingHeaders): AccessDecision {
    if (headers.via !== undefined && viaNamesGateway(headers.via, this.identity))
      return LOOP_REFUSED;
    if (this.hosts !== undefined && !this.hostAllowed(headers.host)) return HOST_REFUSED;
    const origin = headers.origin;
    if (origin === undefined) return PASS;
    if (typeof origin !== 'string' || !this.originAllowed(origin)) return ORIGIN_REFUSED;
    return {
      kind: 'pass',
      cors: {
        'access-control-allow-origin': origin,
        vary: 'Origin',
        'access-control-expose-headers': 'Mcp-Session-Id',
      },
    };
  }

  /** The 204 answer to a CORS preflight of an allowed origin (`cors` from `admit`). */
  preflight(cors: Readonly<Record<string, string>>): HttpAnswer {
    return {
      status: 204,
      headers: {
        ...cors,
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      },
    };
  }

  private hostAllowed(host: string | string[] | undefined): boolean {
    // A request without Host (HTTP/1.0) cannot show which name it was meant for: refused.
    const parsed = typeof host === 'string' ? parseHost(host, false) : undefined;
    return parsed !== undefined && this.hosts !== undefined && listAllows(this.hosts, parsed);
  }

  private originAllowed(origin: string): boolean {
    // `Origin: null` (sandboxed frames, file: pages) passes only when "null" is listed.
    if (origin === 'null') return this.origins.exact.has('null');
    const parsed = parseOrigin(origin, false);
    return parsed !== undefined && listAllows(this.origins, parsed);
  }
}
