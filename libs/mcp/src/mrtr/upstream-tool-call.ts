import type { UpstreamDefinition } from '@app/config';
import { SerializedResult, type MethodContext } from '../handlers/method-handler';
import type { UpstreamRequestHook } from '../handlers/upstream-router';

/** One `tools/call` of an upstream tool, ready to forward. */
export interface UpstreamToolCall {
  readonly upstream: UpstreamDefinition;
  /** The tool's published name (what the envelope binds). */
  readonly tool: string;
  /** params as the upstream is to get them (its own tool name, the client's arguments). */
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
