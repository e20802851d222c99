import { Inject, Injectable, Optional } from '@nestjs/common';
import type { IncomingHeaders } from '@app/execution';
import type { CallerAccess } from '@app/identity';
import { CallerLimits } from '../limits/caller-limits.service';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import {
  METHOD_HANDLERS,
  PLAIN_REQUEST,
  type PreparedRequest,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
  type HeaderMismatch,
} from '../methods/method-handler';

/** Routes a method name to its era-neutral handler. */
@Injectable()
export class MethodDispatcher {
  private readonly handlers: ReadonlyMap<string, MethodHandler>;

  constructor(
    @Inject(METHOD_HANDLERS) handlers: readonly MethodHandler[],
    @Optional() @Inject(CallerLimits) private readonly limits: CallerLimits | null = null,
  ) {
    this.handlers = new Map(handlers.map((h) => [h.method, h]));
  }

  has(method: string): boolean {
    return this.handlers.has(method);
  }

  /** What the request's handler looks up before it runs (MethodHandler.prepare), once. */
  prepare(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    access?: CallerAccess,
  ): PreparedRequest {
    return this.handlers.get(method)?.prepare?.(params, access) ?? PLAIN_REQUEST;
  }

  /** The method's own header checks (MethodHandler.headerMismatch); undefined: none disagree. */
  headerMismatch(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    headers: IncomingHeaders,
    prepared: PreparedRequest,
  ): HeaderMismatch | undefined {
    return this.handlers.get(method)?.headerMismatch?.(params, headers, prepared);
  }

  dispatch(
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    const handler = this.handlers.get(method);
    if (handler === undefined) {
      return Promise.reject(
        new GatewayError(
          GatewayErrorCode.MethodNotFound,
          `Method not found: ${method.slice(0, 128)}`,
        ),
      );
    }
    // docs/operations.md §14 "Rate limits per caller": the caller's bucket first, unless the
    // handler takes it itself (tools/call, with its tool's) or the method is not counted
    if (this.limits?.enabled === true && handler.rateLimit === undefined)
      return this.limits.admit(context.caller).then(() => handler.handle(params, context));
    return handler.handle(params, context);
  }
}
