import { isModernVersion, JsonRpcCode, MetaKey, MODERN_PROTOCOL_VERSIONS } from '@app/wire';
import { errorOf, isRecord } from './json-rpc';
import { httpStatusFailure, isSuccess, type Reply } from './reply-reader';
import { instructionsOf, serverInfoOf, stringsOf, type Session } from './upstream-session';
import { UpstreamFailure } from './upstream-types';

/**
 * The era probe (wire notes §1.3; docs/operations.md §10, "Eras"): what one `server/discover`
 * answer says about the upstream. Pure; the connection sends the probe and acts on the verdict.
 * Its verdicts are pinned on a corpus of real and hostile answers in
 * `libs/upstream/src/testing/probe-fixtures.json`.
 */
export type ProbeVerdict =
  | { readonly kind: 'modern'; readonly session: Session }
  | { readonly kind: 'retry'; readonly version: string }
  | { readonly kind: 'legacy' }
  | { readonly kind: 'unsupported' };

export const PROBE_METHOD = 'server/discover';

/**
 * A `server/discover` answer for `version`, classified as the v2 SDK client does: a
 * DiscoverResult listing our version → modern; -32022 (or a DiscoverResult) naming another
 * version we speak → retry with it; any other JSON-RPC error, or a 4xx without one → legacy;
 * 401/403, 3xx, 5xx → UpstreamFailure `http-status` (thrown); a 2xx that is not JSON-RPC →
 * `bad-answer` (thrown).
 */
export function probeVerdict(reply: Reply, version: string): ProbeVerdict {
  const { status } = reply;
  if (status === 401)
    throw httpStatusFailure(
      status,
      "the upstream refused the request as unauthorized: check the upstream's authorization setting",
    );
  if (status === 403)
    throw httpStatusFailure(
      status,
      'the upstream refused the request as forbidden: its credential, or a server that checks the Host header it is reached by (the host and port of the configured url)',
    );
  if (status >= 500 || (status >= 300 && status < 400))
    throw httpStatusFailure(status, 'the upstream could not answer server/discover');
  if (reply.message === undefined) {
    if (isSuccess(status))
      throw new UpstreamFailure(
        'bad-answer',
        reply.problem ?? "the upstream's answer is not JSON-RPC",
      );
    return { kind: 'legacy' };
  }
  const error = errorOf(reply.message);
  if (error !== undefined) {
    if (error.code !== JsonRpcCode.UnsupportedProtocolVersion) return { kind: 'legacy' };
    const supported = isRecord(error.data) ? stringsOf(error.data.supported) : undefined;
    const mutual = MODERN_PROTOCOL_VERSIONS.find((v) => supported?.includes(v) === true);
    if (mutual !== undefined) return { kind: 'retry', version: mutual };
    if (supported === undefined || supported.some((v) => !isModernVersion(v)))
      return { kind: 'legacy' };
    return { kind: 'unsupported' };
  }
  const result = reply.message.result;
  if (!isSuccess(status) || !isRecord(result)) return { kind: 'legacy' };
  const supported = stringsOf(result.supportedVersions);
  if (supported === undefined || !isRecord(result.capabilities)) return { kind: 'legacy' };
  if (!supported.includes(version)) {
    // v2 servers list only modern versions even when they also serve 2025 (G-10).
    const mutual = MODERN_PROTOCOL_VERSIONS.find((v) => supported.includes(v));
    return mutual === undefined ? { kind: 'legacy' } : { kind: 'retry', version: mutual };
  }
  const meta = isRecord(result._meta) ? result._meta : undefined;
  return {
    kind: 'modern',
    session: {
      era: '2026',
      protocolVersion: version,
      capabilities: result.capabilities,
      serverInfo: serverInfoOf(meta?.[MetaKey.serverInfo]),
      instructions: instructionsOf(result),
    },
  };
}
