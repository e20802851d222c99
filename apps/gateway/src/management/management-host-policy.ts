import { isIPv4, isIPv6 } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  compileManagementHosts,
  listAllows,
  parseHost,
  withoutTrailingDot,
  type AccessList,
} from '@app/config';
import { lingeringClose, SingleHeaders } from '@app/http-body';

/**
 * The status of a refused `Host`: 421 Misdirected Request (RFC 9110 §15.5.20: "not able to
 * produce a response for the authority in the request") — the request is fine, the name is
 * not one this listener answers for. Distinct from /admin's 401/403 on a credential.
 */
export const HOST_REFUSED_STATUS = 421;

const REFUSAL_BODY = JSON.stringify({
  statusCode: HOST_REFUSED_STATUS,
  error: 'Misdirected Request',
  message:
    'The Host header names a host this management port does not serve. Loopback names and IP ' +
    'addresses are always served; list other names in mcp.management.allowedHosts.',
});

const REPEATED_BODY = JSON.stringify({
  statusCode: 400,
  error: 'Bad Request',
  message:
    'A request carries at most one Host and one Authorization header (RFC 9112 §3.2); this one repeats one.',
});

const TARGET_BODY = JSON.stringify({
  statusCode: 400,
  error: 'Bad Request',
  message: 'The request target is neither a path nor an http(s) URL with a host.',
});

/**
 * Headers the port reads one value of: node:http keeps the first of two `Host` lines (the
 * second would never be checked) and of two `Authorization` lines (/admin's credential).
 */
const SINGLE_HEADERS = new SingleHeaders(['host', 'authorization']);

/**
 * The authority of an absolute-form request target (`GET http://name:port/path`, RFC 9112
 * §3.2.2), which names the host the request is for in place of `Host`; undefined for the
 * origin form (`/path`); null for a target that is neither.
 */
function absoluteAuthority(target: string): string | undefined | null {
  if (target.startsWith('/')) return undefined;
  const m = /^https?:\/\/([^/?#]*)/i.exec(target);
  return m === null || m[1] === '' || m[1]?.includes('@') ? null : m[1];
}

/**
 * The management port's `Host` check (DNS rebinding, docs/security.md "The management
 * port"): a page in an operator's browser that makes a name of its own resolve to the
 * gateway would otherwise read /actuator, /console and, without an admin credential,
 * /admin/upstreams. Rebinding needs a host *name* the attacker controls, so these pass:
 *
 * - IP literals, v4 and v6, with or without a port (kubelet probes and Prometheus send
 *   `Host: <pod IP>:<port>`);
 * - loopback names, `localhost` and `*.localhost` (RFC 6761 §6.3: never resolved through DNS
 *   by browsers; `kubectl port-forward` and `npm start` use them);
 * - the names of `mcp.management.allowedHosts`;
 * - no `Host` at all (HTTP/1.0 only: every browser sends one).
 *
 * Anything else, or a `Host` that is not `host[:port]`, is refused before any route runs. A
 * target in absolute form (`GET http://name/…`, which only proxies are sent) names its host
 * in place of `Host` (RFC 9112 §3.2.2): that name must pass as well, and so must a `Host` sent
 * with it. A request with two `Host` (or two `Authorization`) lines is refused with 400: only
 * the first would be read.
 */
export class ManagementHostPolicy {
  private readonly names: AccessList;

  constructor(allowedHosts: readonly string[]) {
    // Validated at boot (loadGatewayConfig): compiling again finds no problem.
    this.names = compileManagementHosts(allowedHosts, []);
  }

  admits(host: string | undefined): boolean {
    if (host === undefined) return true;
    const parsed = parseHost(host, false);
    if (parsed === undefined) return false;
    const name = withoutTrailingDot(parsed.host);
    if (name === 'localhost' || name.endsWith('.localhost')) return true;
    if (isIPv4(name)) return true;
    if (name.startsWith('[') && isIPv6(name.slice(1, -1))) return true;
    return listAllows(this.names, { ...parsed, host: name });
  }

  /**
   * Wraps the listener's request handler: a request whose `Host` is refused gets the 421
   * JSON answer (the `{statusCode, error, message}` shape of the port, docs/operations.md
   * §15) and reaches no route, Nest or fastify; every other goes on unchanged. `refused` hears
   * of each refusal (its status and a reason of fixed text and at most a cut, sanitized host),
   * so a change to /admin refused here is audited like any other (management-adapter.ts).
   */
  guard(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    refused: (req: IncomingMessage, status: number, reason: string) => void = () => undefined,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      const authority = absoluteAuthority(req.url ?? '/');
      const repeated = SINGLE_HEADERS.repeatedIn(req.rawHeaders);
      if (authority === null || repeated !== undefined) {
        refused(
          req,
          400,
          authority === null ? 'request target not a path' : `repeated ${repeated} header`,
        );
        refuse(req, 400, authority === null ? TARGET_BODY : REPEATED_BODY);
      } else if (!this.admits(req.headers.host)) {
        refused(req, HOST_REFUSED_STATUS, `Host not served: ${shownHost(req.headers.host)}`);
        refuse(req, HOST_REFUSED_STATUS, REFUSAL_BODY);
      } else if (authority !== undefined && !this.admits(authority)) {
        refused(req, HOST_REFUSED_STATUS, `target host not served: ${shownHost(authority)}`);
        refuse(req, HOST_REFUSED_STATUS, REFUSAL_BODY);
      } else {
        handler(req, res);
      }
    };
  }
}

/** The longest host a refusal's reason shows: the caller's text must not size a log line. */
const MAX_SHOWN_HOST = 64;

/**
 * A refused host as a log line may show it: characters a host name or address has, every
 * other one `?`, cut at 64 (docs/operations.md §15 "Access": no text of the caller's beyond).
 */
function shownHost(host: string | undefined): string {
  const safe = (host ?? '').replace(/[^A-Za-z0-9.:[\]-]/g, '?');
  return safe.length <= MAX_SHOWN_HOST ? safe : `${safe.slice(0, MAX_SHOWN_HOST)}…`;
}

/**
 * The port's `{statusCode, error, message}` answer, before any route runs. The body (if any)
 * is never read: the answer is followed by a lingering close, so a client still sending it
 * reads the answer instead of a reset (docs/security.md "The management port").
 */
function refuse(req: IncomingMessage, status: number, body: string): void {
  lingeringClose(req, {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    body,
  });
}
