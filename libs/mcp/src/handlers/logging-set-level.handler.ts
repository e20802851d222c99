import { Injectable } from '@nestjs/common';
import { fanOut } from '@app/execution';
import { RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { logRank, MCP_LOG_LEVELS, type McpLogLevel } from '@app/wire';
import { SessionLogLevels } from '../session/session-log-levels';
import { SharedValueNotStoredError } from '../session/session-values';
import { callerKey } from '../session/caller-key';
import { SessionTokenService } from '../session/session-token.service';
import type { MethodContext, MethodHandler, MethodResult } from '../methods/method-handler';
import { UpstreamRouter } from '../relay/upstream-router';
import { granted, type Params } from '../relay/upstream-handler-support';

/**
 * `logging/setLevel`: remembered for the client's 2025 session (SessionLogLevels: what the
 * gateway relays to it is filtered by it, and a 2026 upstream gets it in each request's
 * `_meta`) and forwarded to every upstream that offers logging (docs/operations.md §10
 * "Logging"); `{}` once they have all answered, whatever they answered (a level is a wish, not
 * a contract). A level that is not one of the eight is -32602.
 */
/** How long a setLevel waits for the upstreams it forwards to, ms, before it is answered. */
const SET_LEVEL_WAIT_MS = 2000;

@Injectable()
export class LoggingSetLevelHandler implements MethodHandler {
  readonly method = 'logging/setLevel';

  constructor(
    private readonly registry: RegistryService,
    private readonly router: UpstreamRouter,
    private readonly levels: SessionLogLevels,
    private readonly sessions: SessionTokenService,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const level = params?.level;
    if (logRank(level) === undefined)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Invalid params: params.level must be one of ${MCP_LOG_LEVELS.join(', ')}`,
      );
    const header = context.headers['mcp-session-id'];
    const claims =
      typeof header === 'string' && this.sessions.sealed
        ? this.sessions.openFor(header, context.caller)
        : undefined;
    let notShared: SharedValueNotStoredError | undefined;
    if (claims !== undefined && typeof header === 'string')
      await this.levels
        .set(
          header,
          level as McpLogLevel,
          claims.expiresAt * 1000,
          Date.now(),
          callerKey(context.caller),
        )
        .catch((err: unknown) => {
          if (!(err instanceof SharedValueNotStoredError)) throw err;
          notShared = err;
        });
    const upstreams = (this.registry.current()?.extras.upstreamsWith('logging') ?? []).filter((u) =>
      granted(context.access, u.id),
    );
    // the answer does not depend on the upstreams': each is waited on at most a short while, so
    // one that never answers cannot hold every client's setLevel for its callMillis (the
    // forward goes on, bounded by it)
    // each forward with a cancellation of its own, all ended with the request (fanOut)
    const { parts, release } = fanOut(context.signal, upstreams.length);
    const forwards = Promise.allSettled(
      upstreams.map((u, i) =>
        this.router.forward(u, this.method, { ...params }, { ...context, signal: parts[i] }),
      ),
    );
    void forwards.finally(release);
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([
      forwards,
      new Promise((resolve) => (waited = setTimeout(resolve, SET_LEVEL_WAIT_MS))),
    ]);
    clearTimeout(waited);
    // said, not hidden: the client's calls that reach another replica relay every level
    if (notShared !== undefined)
      throw new GatewayError(
        GatewayErrorCode.Internal,
        `Internal error: the level ${notShared.message}`,
      );
    return {};
  }
}
