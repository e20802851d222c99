import { createHash } from 'node:crypto';
import { upstreamSource, type UpstreamDefinition } from '@app/config';
import { SerializedResult } from '../methods/method-handler';
import type { StateBinding } from './request-state-envelope';

/**
 * The methods whose result may be `input_required` (wire notes §4 "Applies to"): the requests
 * MrtrCalls takes through multi round-trip rounds and era bridging
 * (docs/operations.md §11 "Multi round-trip and era bridging").
 */
export type MrtrMethod = 'tools/call' | 'prompts/get' | 'resources/read';

/**
 * One `tools/call`, `prompts/get` or `resources/read` of an upstream's entry, ready to forward:
 * each round goes to UpstreamRouter.forward, the one forwarder of upstream requests.
 */
export interface UpstreamMrtrRequest {
  readonly upstream: UpstreamDefinition;
  readonly method: MrtrMethod;
  /** What the client named: the published tool or prompt name, or the resource URI (the envelope binds it). */
  readonly target: string;
  /** params as the upstream is to get them (its own tool or prompt name, the client's arguments). */
  readonly params: Readonly<Record<string, unknown>>;
  /** The client's `params.arguments` as parsed (undefined for resources/read): the envelope binds a digest of them. */
  readonly arguments: unknown;
  /** Headers of this request only, sent on each round (a 2026 upstream's `Mcp-Param-*`). */
  readonly requestHeaders?: Readonly<Record<string, string>>;
}

/** A round's result as a plain object (a passed-on upstream result as its parsed value). */
export function plain(result: object): Record<string, unknown> {
  return result instanceof SerializedResult ? result.value : (result as Record<string, unknown>);
}

/**
 * The envelope's binding of this request
 * (docs/operations.md §11 "Multi round-trip and era bridging"; wire notes §4 "State and security":
 * bind the method and a digest of the salient params): the upstream as registered (its id, URL
 * and registration, so a state never reaches another server or registration that holds the id
 * later, docs/operations.md §15 "Deleted means gone"), the method, the
 * published name or URI and a SHA-256 digest of the client's arguments (canonical JSON: members in
 * sorted order, so a retry must re-send the same arguments but may write them in another order,
 * as JSON objects are unordered), and the caller. The name and digest are computed
 * when first read: only rounds that wrap or open an envelope pay for them.
 */
export function bindingOf(request: UpstreamMrtrRequest, caller: string | null): StateBinding {
  let bound: string | undefined;
  return {
    upstream: `${request.upstream.id} ${upstreamSource(request.upstream)}`,
    get tool(): string {
      bound ??= `${request.method} ${request.target} ${createHash('sha256')
        .update(canonicalJson(request.arguments ?? {}))
        .digest('base64url')
        .slice(0, 22)}`;
      return bound;
    },
    caller,
  };
}

/** JSON text with every object's members sorted by name: one text for equal JSON values. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
