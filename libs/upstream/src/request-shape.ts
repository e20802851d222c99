import { CLIENT_DROPPED_HEADERS, encodeHeaderValue, MetaKey } from '@app/wire';
import { isRecord } from './json-rpc';
import type { UpstreamEndpoint } from './upstream-types';

/**
 * The shape of what the gateway sends an upstream, per era (docs/operations.md §10; the wire
 * notes of both revisions): the headers of a POST, a GET and a DELETE, and the 2026 `_meta`
 * envelope. Pure: names are lower-cased, a caller's hop-by-hop and credential-bearing headers
 * are dropped here as everywhere (CLIENT_DROPPED_HEADERS).
 */

/** What a 2025 request is sent on: the negotiated version and the session, if any. */
export interface SessionRef {
  readonly protocolVersion: string;
  readonly sessionId?: string;
}

/**
 * The given headers without the dropped ones, plus Accept and (for a body) Content-Type.
 * Names are lower-cased.
 */
export function headersFor(
  extra: Readonly<Record<string, string>> | undefined,
  withBody = true,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (extra !== undefined) {
    for (const [name, value] of Object.entries(extra)) {
      const lower = name.toLowerCase();
      if (!CLIENT_DROPPED_HEADERS.has(lower)) headers[lower] = value;
    }
  }
  if (withBody) {
    headers.accept = 'application/json, text/event-stream';
    headers['content-type'] = 'application/json';
  }
  return headers;
}

/** A 2025 POST: MCP-Protocol-Version and, when the session has one, Mcp-Session-Id. */
export function legacyHeaders(
  extra: Readonly<Record<string, string>> | undefined,
  session: SessionRef,
): Record<string, string> {
  const headers = headersFor(extra);
  headers['mcp-protocol-version'] = session.protocolVersion;
  if (session.sessionId !== undefined) headers['mcp-session-id'] = session.sessionId;
  return headers;
}

/** A 2026 POST: MCP-Protocol-Version, Mcp-Method and, for the methods that have one, Mcp-Name. */
export function modernHeaders(
  extra: Readonly<Record<string, string>> | undefined,
  version: string,
  method: string,
  name: string | undefined,
): Record<string, string> {
  const headers = headersFor(extra);
  headers['mcp-protocol-version'] = version;
  headers['mcp-method'] = encodeHeaderValue(method);
  if (name !== undefined) headers['mcp-name'] = name;
  return headers;
}

/**
 * A GET or DELETE on a 2025 session (the standalone stream, the DELETE at close), with the
 * gateway's own headers: no body, the session's version and id.
 */
export function sessionLevelHeaders(
  own: Readonly<Record<string, string>>,
  session: SessionRef,
  accept: string,
): Record<string, string> {
  const headers = headersFor(own, false);
  headers.accept = accept;
  headers['mcp-protocol-version'] = session.protocolVersion;
  if (session.sessionId !== undefined) headers['mcp-session-id'] = session.sessionId;
  return headers;
}

/** Longest SSE event id kept to resume a stream with (a `Last-Event-ID` header's value). */
export const MAX_RESUMABLE_EVENT_ID = 4096;

/**
 * An upstream's SSE event id as a stream can be resumed from it: undefined when it cannot go
 * back as a `Last-Event-ID` header (a control character, a character beyond Latin-1, or over
 * MAX_RESUMABLE_EVENT_ID): such an id still replaces the one before (SSE), so the stream is then
 * not resumed at all, never from an older id (its events again) nor with a GET that cannot be
 * sent.
 */
export function resumableEventId(id: string): string | undefined {
  return id.length <= MAX_RESUMABLE_EVENT_ID && HEADER_VALUE.test(id) ? id : undefined;
}

/** A header value as HTTP sends it: tab, visible ASCII, space and obs-text (RFC 9110 §5.5). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The headers of the GET that resumes a request's stream: the request's own, for a stream. */
export function resumeHeaders(
  post: Record<string, string>,
  lastEventId: string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(post)) {
    if (name !== 'content-type' && name !== 'mcp-method' && name !== 'mcp-name')
      headers[name] = value;
  }
  headers.accept = 'text/event-stream';
  headers['last-event-id'] = lastEventId;
  return headers;
}

/**
 * params with the 2026 `_meta` envelope, the one place it is built: every `_meta` key already
 * there is kept, the caller's capabilities (when given) win over the params' and the
 * endpoint's, and the version is always the one in use.
 */
export function withEnvelope(
  endpoint: Pick<UpstreamEndpoint, 'clientCapabilities' | 'clientInfo'>,
  params: Record<string, unknown> | undefined,
  version: string,
  clientCapabilities?: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const given = isRecord(params?._meta) ? params._meta : {};
  return {
    ...params,
    _meta: {
      [MetaKey.clientCapabilities]: endpoint.clientCapabilities,
      [MetaKey.clientInfo]: endpoint.clientInfo,
      ...given,
      ...(clientCapabilities !== undefined && {
        [MetaKey.clientCapabilities]: clientCapabilities,
      }),
      // Must equal the MCP-Protocol-Version header (G-1).
      [MetaKey.protocolVersion]: version,
    },
  };
}
