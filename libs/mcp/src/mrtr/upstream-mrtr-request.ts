import type { UpstreamDefinition } from '@app/config';
import { SerializedResult, type MethodContext } from '../handlers/method-handler';
import type { UpstreamRequestHook } from '../handlers/upstream-router';

/**
 * The methods whose result may be `input_required` (wire notes §4 "Applies to"): the requests
 * MrtrCalls takes through multi round-trip rounds and era bridging (issue 11 §5, §7).
 */
export type MrtrMethod = 'tools/call' | 'prompts/get' | 'resources/read';

/** One `tools/call`, `prompts/get` or `resources/read` of an upstream's entry, ready to forward. */
export interface UpstreamMrtrRequest {
  readonly upstream: UpstreamDefinition;
  readonly method: MrtrMethod;
  /** What the client named: the published tool or prompt name, or the resource URI (the envelope binds it). */
  readonly target: string;
  /** params as the upstream is to get them (its own tool or prompt name, the client's arguments). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Forwards one round; throws GatewayError/ForwardedError as UpstreamRouter.forward. */
  readonly send: (
    params: Record<string, unknown>,
    context: MethodContext,
    onRequest?: UpstreamRequestHook,
  ) => Promise<object>;
}

/** A round's result as a plain object (a passed-on upstream result as its parsed value). */
export function plain(result: object): Record<string, unknown> {
  return result instanceof SerializedResult ? result.value : (result as Record<string, unknown>);
}

/**
 * What the envelope binds as the request's name: a tool's published name as it is (envelopes
 * of tool calls keep their shape), `prompts/get <name>` and `resources/read <uri>` otherwise,
 * so a state issued for one kind can never be spent on another.
 */
export function bindingName(request: UpstreamMrtrRequest): string {
  return request.method === 'tools/call' ? request.target : `${request.method} ${request.target}`;
}
