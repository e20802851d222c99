import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig, type UpstreamDefinition } from '@app/config';
import {
  Clock,
  type UpstreamItem,
  type UpstreamLists,
  type UpstreamPullErrorType,
  type UpstreamPullResult,
} from '@app/registry';
import { UpstreamConnections, UpstreamFailure, type UpstreamFailureKind } from '@app/upstream';
import { upstreamRequestHeaders } from '@app/upstream';
import { SourceCredentialError, SourceCredentials } from '@app/identity';

/** The four lists of an upstream, the capability that offers each, and the result key. */
const LISTS = [
  { method: 'tools/list', capability: 'tools', key: 'tools' },
  { method: 'resources/list', capability: 'resources', key: 'resources' },
  { method: 'resources/templates/list', capability: 'resources', key: 'resourceTemplates' },
  { method: 'prompts/list', capability: 'prompts', key: 'prompts' },
] as const;

const FAILURE_TYPES: Readonly<Record<UpstreamFailureKind, UpstreamPullErrorType>> = {
  unreachable: 'UpstreamUnreachableError',
  timeout: 'UpstreamTimeoutError',
  cancelled: 'UpstreamTimeoutError',
  'http-status': 'UpstreamHttpError',
  'bad-answer': 'UpstreamBadAnswerError',
  'too-large': 'UpstreamTooLargeError',
  'session-lost': 'UpstreamSessionError',
  'era-mismatch': 'UpstreamBadAnswerError',
};

/** A failed pull, thrown inside `pullLists` and turned into a result value by `pull`. */
class PullFailure extends Error {
  constructor(
    readonly errorType: UpstreamPullErrorType,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/**
 * Pulls the lists of one upstream MCP server (issue 10 §3): connects (era detection, 2025
 * session), then `tools/list`, `resources/list`, `resources/templates/list` and
 * `prompts/list` (each only when the server's capabilities offer it), each following
 * `nextCursor` to the end. The whole pull, every page, is bounded by the upstream's
 * `listMillis`; a cursor seen twice or more than `registry.maxPagesPerList` pages is a failed
 * pull. A failure is a value, never an exception.
 */
@Injectable()
export class UpstreamListPuller {
  constructor(
    private readonly connections: UpstreamConnections,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly credentials: SourceCredentials,
  ) {}

  /**
   * A pull has no caller: with authorization mode tokenExchange it carries the gateway's own
   * client-credentials token for the upstream's audience (issue 12 §4; docs/operations.md).
   */
  private async pullHeaders(upstream: UpstreamDefinition): Promise<Record<string, string>> {
    const auth = upstream.authorization;
    if (auth.mode !== 'tokenExchange') return upstreamRequestHeaders(upstream, {});
    try {
      return upstreamRequestHeaders(upstream, {}, await this.credentials.forGateway(auth));
    } catch (err) {
      throw new PullFailure(
        'UpstreamCredentialError',
        err instanceof SourceCredentialError ? err.message : 'the credential could not be obtained',
      );
    }
  }

  async pull(upstream: UpstreamDefinition): Promise<UpstreamPullResult> {
    const attemptedAt = this.clock.now();
    try {
      const lists = await this.pullLists(upstream);
      return { upstreamId: upstream.id, kind: 'lists', lists, attemptedAt };
    } catch (err) {
      const failure =
        err instanceof PullFailure
          ? err
          : err instanceof UpstreamFailure
            ? new PullFailure(FAILURE_TYPES[err.kind], err.message)
            : new PullFailure('UnexpectedPullError', err instanceof Error ? err.name : typeof err);
      return {
        upstreamId: upstream.id,
        kind: 'failed',
        errorType: failure.errorType,
        detail: failure.detail,
        attemptedAt,
      };
    }
  }

  private async pullLists(upstream: UpstreamDefinition): Promise<UpstreamLists> {
    const connection = this.connections.get(upstream);
    const deadline = performance.now() + upstream.listMillis;
    const left = (): number => Math.max(1, Math.round(deadline - performance.now()));
    const headers = await this.pullHeaders(upstream);
    await connection.connect({ deadlineMillis: left(), headers });
    const capabilities = connection.serverCapabilities ?? {};
    const collected: Record<(typeof LISTS)[number]['key'], UpstreamItem[]> = {
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
    };
    // The lists are independent: fetched concurrently, each page after the one before.
    await Promise.all(
      LISTS.filter((list) => capabilities[list.capability] !== undefined).map(async (list) => {
        const seen = new Set<string>();
        let cursor: string | undefined;
        for (let page = 1; ; page++) {
          if (page > this.config.mcp.registry.maxPagesPerList)
            throw new PullFailure(
              'UpstreamPaginationError',
              `${list.method} has more than ${this.config.mcp.registry.maxPagesPerList} pages`,
            );
          const answer = await connection.request(
            list.method,
            cursor === undefined ? undefined : { cursor },
            { deadlineMillis: left(), headers },
          );
          if (answer.kind === 'error')
            throw new PullFailure(
              'UpstreamListError',
              `${list.method} answered JSON-RPC error ${answer.code}`,
            );
          const items = answer.result[list.key];
          if (!Array.isArray(items))
            throw new PullFailure(
              'UpstreamBadAnswerError',
              `${list.method} result has no ${list.key} array`,
            );
          for (const item of items as UpstreamItem[]) collected[list.key].push(item);
          const next = answer.result.nextCursor;
          if (next === undefined || next === null) break;
          if (typeof next !== 'string')
            throw new PullFailure(
              'UpstreamBadAnswerError',
              `${list.method} nextCursor is not a string`,
            );
          if (seen.has(next))
            throw new PullFailure(
              'UpstreamPaginationError',
              `${list.method} repeated the cursor of an earlier page`,
            );
          seen.add(next);
          cursor = next;
        }
      }),
    );
    return {
      era: connection.era ?? '2025',
      capabilities,
      ...collected,
    };
  }
}
