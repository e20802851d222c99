import { isIPv4, isIPv6 } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  compileManagementHosts,
  listAllows,
  parseHost,
  withoutTrailingDot,
  type AccessList,
} from '@app/config';

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
 * Anything else, or a `Host` that is not `host[:port]`, is refused before any route runs.
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
   * §15) and reaches no route, Nest or fastify; every other goes on unchanged.
   */
  guard(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      if (this.admits(req.headers.host)) {
        handler(req, res);
        return;
      }
      res.writeHead(HOST_REFUSED_STATUS, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(REFUSAL_BODY),
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        // the body (if any) is never read: the connection ends with this answer
        connection: 'close',
      });
      res.end(REFUSAL_BODY);
    };
  }
}
