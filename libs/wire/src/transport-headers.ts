/**
 * Request headers that never travel from a caller to a source as they are: hop-by-hop and
 * framing headers (RFC 9110 §7.6.1), the MCP transport headers the gateway's client side sets
 * itself, and the ones that carry credentials (which have their own `authorization` setting;
 * docs/security.md, "Credentials towards sources"). Config refuses them in `forwardHeaders`;
 * the upstream client drops the first two kinds from whatever it is handed.
 */

/** Hop-by-hop and framing headers: they describe one connection, never a forwarded request. */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
];

/** Headers the gateway's MCP client sets itself on every request to an upstream. */
export const MCP_TRANSPORT_HEADERS: readonly string[] = [
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'via',
];

/**
 * The `Via` entry (RFC 9110 §7.6.3) the gateway puts on every request to an upstream MCP server,
 * its identity as the pseudonym: a request that arrives on `/mcp` with it came from a gateway of
 * this identity (this replica or another), so an upstream that is the gateway itself — a
 * registration or a config naming its own URL, directly or behind a Service — is refused (508)
 * instead of federating itself deeper at every round (docs/operations.md §10 "Routing").
 */
export function gatewayVia(identity: string): string {
  return `1.1 mcp-gateway.${identity}`;
}

/** Whether a request's `Via` header names a hop through a gateway of this identity. */
export function viaNamesGateway(via: string | string[] | undefined, identity: string): boolean {
  if (via === undefined) return false;
  const own = `mcp-gateway.${identity}`;
  for (const line of typeof via === 'string' ? [via] : via)
    for (const entry of line.split(',')) if (entry.trim().split(/\s+/)[1] === own) return true;
  return false;
}

/** Headers that carry a caller's or a proxy's credentials. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
];

/**
 * The caller headers that identify the person behind a call to a Tool Service (contract §10: the
 * encrypted employee numbers): treated like a credential, redacted from log lines
 * (observability's REDACTED_HEADERS), refused when repeated, and never forwarded to a URL a
 * runtime registration chose (config's REGISTRATION_UNFORWARDABLE_HEADERS, docs/security.md
 * "Runtime registrations").
 */
export const PERSONAL_CALLER_HEADERS = ['employee-no', 'virtual-employee-no'] as const;

/**
 * What a source's `forwardHeaders` may not name: all of the above, the content and
 * proxy-authentication headers of the connection, and the codings the gateway negotiates itself.
 */
export const UNFORWARDABLE_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP_HEADERS,
  ...MCP_TRANSPORT_HEADERS,
  ...CREDENTIAL_HEADERS,
  'content-encoding',
  'accept-encoding',
  'proxy-authenticate',
]);

/**
 * What the upstream client drops from the headers it is given for a request (the caller's
 * forwarded headers and the credential chosen by the source's `authorization`): hop-by-hop
 * and transport headers, and `Expect`, which would make the upstream wait for a 100.
 */
export const CLIENT_DROPPED_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP_HEADERS,
  ...MCP_TRANSPORT_HEADERS,
  'expect',
]);

/** Request bodies above this are refused with 413 (the official SDKs' limit; wire notes G-31). */
export const MCP_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Request bodies on the management port above this are refused with 413 (fastify's default,
 * set in apps/gateway/src/management/management-adapter.ts): what bounds a registration's or a
 * virtual server's record in Redis (docs/operations.md §15).
 */
export const MANAGEMENT_MAX_BODY_BYTES = 1_048_576;
