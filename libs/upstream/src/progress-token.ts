import type { RequestId } from './json-rpc';
import type { UpstreamMessageListener } from './upstream-types';

const PROGRESS = 'notifications/progress';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A request's progress token as its upstream gets it: the gateway's own, never the caller's.
 *
 * Progress tokens are chosen by the requester and must be unique among its active requests
 * (MCP 2025-11-25 basic/utilities/progress), so an upstream may file what it reports under the
 * token alone. Towards an upstream the gateway is one requester for every caller (one 2025
 * session per upstream per replica, shared; a 2026 upstream sees one client too), while each
 * caller picks its tokens for itself: two callers both sending `progressToken: 1` would have
 * the upstream report one caller's progress — its words, whatever they tell of its work — on
 * the other's request (docs/security.md "What an upstream can make the gateway do"). So a
 * request that asks for progress goes with the request's own JSON-RPC id as its token (unique
 * on the connection, as the SDKs' clients do), and what comes back under it on the request's
 * stream is the caller's again under the caller's token; progress under any other token is
 * not this request's and is dropped.
 *
 * The same params and listener when the request asks for no progress.
 */
export function ownProgressToken(
  params: Record<string, unknown> | undefined,
  id: RequestId,
  onMessage: UpstreamMessageListener | undefined,
): {
  readonly params: Record<string, unknown> | undefined;
  readonly onMessage: UpstreamMessageListener | undefined;
} {
  const meta = params?._meta;
  if (params === undefined || !isRecord(meta) || meta.progressToken === undefined)
    return { params, onMessage };
  const callerToken = meta.progressToken;
  return {
    params: { ...params, _meta: { ...meta, progressToken: id } },
    onMessage:
      onMessage === undefined
        ? undefined
        : (message, context) => {
            if (message.method !== PROGRESS || message.id !== undefined) {
              onMessage(message, context);
              return;
            }
            const progress = message.params;
            if (!isRecord(progress) || progress.progressToken !== id) return;
            onMessage({ ...message, params: { ...progress, progressToken: callerToken } }, context);
          },
  };
}
