import { setOwnMember } from './own-member';

/**
 * The `_meta` keys of the 2026-07-28 request envelope and of results (wire notes §2.0 in
 * ../shared/reference; docs/operations.md §11). One spelling for the server side (the front
 * door reads them from agents) and the client side (the gateway writes them to upstreams).
 */
export const MetaKey = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  /** Optional and deprecated in 2026-07-28: the level of the request's notifications/message. */
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/**
 * The keys of the 2026-07-28 per-request envelope (wire notes §2.0): the client's era, identity,
 * capabilities and log level. A 2025-11-25 session settles all of them at `initialize`, so a
 * request in that era never carries them: a dual-era server reads a request that does as a
 * 2026 one.
 */
export const REQUEST_ENVELOPE_KEYS: readonly string[] = [
  MetaKey.protocolVersion,
  MetaKey.clientCapabilities,
  MetaKey.clientInfo,
  MetaKey.logLevel,
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `params` as a request of a 2025-11-25 session carries them: without the 2026 envelope keys in
 * `_meta` (every other `_meta` key, progressToken, traceparent and the like, kept; an `_meta`
 * left empty is left out). The same object when there is nothing to take out.
 */
export function withoutRequestEnvelope(
  params: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const meta = params?._meta;
  if (params === undefined || !isRecord(meta)) return params;
  if (!REQUEST_ENVELOPE_KEYS.some((key) => key in meta)) return params;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta))
    if (!REQUEST_ENVELOPE_KEYS.includes(key)) setOwnMember(rest, key, value);
  const { _meta: _envelope, ...others } = params;
  return Object.keys(rest).length === 0 ? others : { ...others, _meta: rest };
}
