import { ACCEPTED_UPSTREAM_LEGACY_VERSIONS, JsonRpcCode, LATEST_LEGACY_VERSION } from '@app/wire';
import { isRecord, type RequestId } from './json-rpc';
import { httpStatusFailure, isSuccess, plainOutcome, type Reply } from './reply-reader';
import {
  UpstreamFailure,
  type UpstreamEndpoint,
  type UpstreamEra,
  type UpstreamServerInfo,
} from './upstream-types';

/**
 * What one connect to an upstream established (docs/operations.md §10, "Eras"): a 2025 session
 * from initialize, or the 2026 server/discover answer (era-probe.ts). Replaced as a whole,
 * never changed. This file reads initialize's answer; the connection sends it.
 */
export interface Session {
  readonly era: UpstreamEra;
  readonly protocolVersion: string;
  readonly sessionId?: string;
  readonly capabilities?: Readonly<Record<string, unknown>>;
  readonly serverInfo?: UpstreamServerInfo;
  readonly instructions?: string;
}

/** An Mcp-Session-Id the gateway will send back: visible ASCII only (2025-11-25 transports). */
const SESSION_ID = /^[\x21-\x7e]+$/;
const DATE_VERSION = /^\d{4}-\d{2}-\d{2}$/;

export function validSessionId(sessionId: string | undefined): string | undefined {
  return sessionId !== undefined && SESSION_ID.test(sessionId) ? sessionId : undefined;
}

export function eraMismatch(message: string): UpstreamFailure {
  return new UpstreamFailure('era-mismatch', message);
}

export function stringsOf(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string')
    ? value
    : undefined;
}

export function serverInfoOf(value: unknown): UpstreamServerInfo | undefined {
  return isRecord(value) && typeof value.name === 'string' && typeof value.version === 'string'
    ? (value as UpstreamServerInfo)
    : undefined;
}

export function instructionsOf(result: Record<string, unknown>): string | undefined {
  return typeof result.instructions === 'string' ? result.instructions : undefined;
}

/** The 2025-11-25 initialize request, with the gateway's identity and capabilities. */
export function initializeBody(
  endpoint: Pick<UpstreamEndpoint, 'clientCapabilities' | 'clientInfo'>,
  id: RequestId,
  /** `{ _meta }` with the span's context (SEP-414) when a traced request opened the session. */
  traced?: { readonly _meta: Readonly<Record<string, string>> },
): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_LEGACY_VERSION,
      capabilities: endpoint.clientCapabilities,
      clientInfo: endpoint.clientInfo,
      ...traced,
    },
  });
}

/**
 * The 2025 session initialize's answer opens (its session id may be absent: a stateless
 * server). Throws UpstreamFailure: `era-mismatch` (the version refused, or answered with one
 * the gateway does not speak), `http-status`, `bad-answer` (another JSON-RPC error, an
 * invalid session id, not the response).
 */
export function sessionFromInitialize(reply: Reply): Session {
  const answer = plainOutcome(reply);
  if (answer instanceof UpstreamFailure) throw answer;
  if (answer.kind === 'error') {
    const supported = isRecord(answer.data) ? stringsOf(answer.data.supported) : undefined;
    if (answer.code === JsonRpcCode.UnsupportedProtocolVersion || supported !== undefined)
      throw eraMismatch(
        `the upstream refused initialize for protocol version ${LATEST_LEGACY_VERSION}`,
      );
    if (!isSuccess(reply.status))
      throw httpStatusFailure(reply.status, 'the upstream refused initialize');
    throw new UpstreamFailure(
      'bad-answer',
      `the upstream answered initialize with JSON-RPC error ${answer.code}`,
    );
  }
  const { result } = answer;
  const version = result.protocolVersion;
  if (typeof version !== 'string' || !ACCEPTED_UPSTREAM_LEGACY_VERSIONS.has(version)) {
    const named = typeof version === 'string' && DATE_VERSION.test(version) ? ` ${version}` : '';
    throw eraMismatch(
      `the upstream answered initialize with a protocol version${named} this gateway does not speak`,
    );
  }
  if (reply.sessionId !== undefined && validSessionId(reply.sessionId) === undefined)
    throw new UpstreamFailure('bad-answer', 'the upstream sent an invalid Mcp-Session-Id');
  return {
    era: '2025',
    protocolVersion: version,
    sessionId: reply.sessionId,
    capabilities: isRecord(result.capabilities) ? result.capabilities : undefined,
    serverInfo: serverInfoOf(result.serverInfo),
    instructions: instructionsOf(result),
  };
}
