import { Inject, Injectable } from '@nestjs/common';
import {
  GATEWAY_CONFIG,
  toolsCapPerUpstream,
  type GatewayConfig,
  type UpstreamDefinition,
} from '@app/config';
import {
  Clock,
  RegistryService,
  type UpstreamItem,
  type UpstreamListHints,
  type UpstreamListKey,
  type UpstreamLists,
  type UpstreamPullErrorType,
  type UpstreamPullResult,
} from '@app/registry';
import {
  ListPagesFault,
  readListPages,
  UpstreamConnections,
  UpstreamFailure,
  type ListPagesFaultKind,
  type UpstreamFailureKind,
} from '@app/upstream';
import { upstreamRequestHeaders } from '@app/upstream';
import { SourceCredentialError, SourceCredentials } from '@app/identity';
import { pullEach, type SourcePuller, type SourcePulls } from './source-puller';

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
  'too-deep': 'UpstreamTooDeepError',
  credential: 'UpstreamCredentialError',
  // only readListPages asks for a check before parsing, and it turns a refusal into its fault
  refused: 'UpstreamBadAnswerError',
  // a registered upstream's host resolved to a refused address at connect (docs/security.md)
  'address-refused': 'UpstreamAddressRefusedError',
  // a pull of a registration deleted or replaced while it ran: its result is not applied
  removed: 'UpstreamUnreachableError',
};

/**
 * The hints of the pages so far and of one more page (wire notes §3): the smallest ttlMs
 * (a negative one counts as 0) and `private` over `public`; a member a page omits stays
 * absent, so it is read as the spec's default (ttlMs 0, private) or the upstream's config.
 */
export function addPageHints(
  sofar: UpstreamListHints | undefined,
  page: Readonly<Record<string, unknown>>,
  first: boolean,
): UpstreamListHints {
  const ttl = page.ttlMs;
  const pageTtl =
    typeof ttl === 'number' && Number.isFinite(ttl) ? Math.max(0, Math.floor(ttl)) : undefined;
  const scope = page.cacheScope;
  const pageScope = scope === 'public' || scope === 'private' ? scope : undefined;
  if (first) return { ttlMs: pageTtl, cacheScope: pageScope };
  return {
    ttlMs:
      sofar?.ttlMs === undefined || pageTtl === undefined
        ? undefined
        : Math.min(sofar.ttlMs, pageTtl),
    cacheScope:
      sofar?.cacheScope === undefined || pageScope === undefined
        ? undefined
        : sofar.cacheScope === 'private' || pageScope === 'private'
          ? 'private'
          : 'public',
  };
}

const PAGE_FAULTS: Readonly<Record<ListPagesFaultKind, UpstreamPullErrorType>> = {
  'list-error': 'UpstreamListError',
  'bad-answer': 'UpstreamBadAnswerError',
  pagination: 'UpstreamPaginationError',
  'too-many-items': 'UpstreamTooManyToolsError',
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
 * Pulls the lists of one upstream MCP server (docs/operations.md §10 "Lists"): connects (era
 * detection, 2025 session), then `tools/list`, `resources/list`, `resources/templates/list` and
 * `prompts/list` (each only when the server's capabilities offer it; of a `lists: live`
 * upstream only the two resource lists), each following `nextCursor` to the end. The whole
 * pull, every page, is bounded by the upstream's `listMillis`; a cursor seen twice, more than
 * `registry.maxPagesPerList` pages, more tools than `discovery.maxToolsPerUpstream` or more
 * entries of another list than `discovery.maxListItemsPerUpstream` (counted before parsing)
 * is a failed pull. A failure is a value, never an exception.
 */
@Injectable()
export class UpstreamListPuller implements SourcePuller {
  readonly kind = 'upstream';

  constructor(
    private readonly connections: UpstreamConnections,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly credentials: SourceCredentials,
    private readonly registry: RegistryService,
  ) {}

  /** A refresh round's pull of every enabled upstream, configured or registered. */
  async pullAll(traced: boolean): Promise<SourcePulls> {
    const results = await pullEach(
      this.kind,
      this.registry.enabledUpstreams(),
      (upstream) => this.pull(upstream),
      traced,
    );
    return { kind: this.kind, results };
  }

  /**
   * A pull has no caller: with authorization mode tokenExchange it carries the gateway's own
   * client-credentials token for the upstream's audience
   * (docs/operations.md §14 "Credentials towards sources").
   */
  private async pullHeaders(upstream: UpstreamDefinition): Promise<Record<string, string>> {
    const auth = upstream.authorization;
    if (auth.mode !== 'tokenExchange') return upstreamRequestHeaders(upstream, {});
    try {
      return upstreamRequestHeaders(
        upstream,
        {},
        await this.credentials.forGateway(auth, this.connections.guardedDispatcher(upstream)),
      );
    } catch (err) {
      throw new PullFailure(
        err instanceof SourceCredentialError && err.addressRefused
          ? 'UpstreamAddressRefusedError'
          : 'UpstreamCredentialError',
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
    await connection.connect({ deadlineMillis: left() });
    const capabilities = connection.serverCapabilities ?? {};
    const collected: Record<(typeof LISTS)[number]['key'], UpstreamItem[]> = {
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
    };
    // A live upstream's lists are fetched per request, for the caller: its tools and prompts
    // are never pulled. Its resources and templates are, as the gateway itself is answered:
    // they route resources/read and keep the URIs they cover from a later source, as a
    // snapshot upstream's do, without being listed (docs/operations.md §11 "Live lists").
    const pulled = LISTS.filter(
      (list) =>
        capabilities[list.capability] !== undefined &&
        (upstream.lists !== 'live' || list.key === 'resources' || list.key === 'resourceTemplates'),
    );
    const hints: Partial<Record<UpstreamListKey, UpstreamListHints>> = {};
    // A tools/list over the cap is refused as it is counted, before it is parsed and before any
    // of its schemas is compiled; the upstream keeps its last good lists (docs/operations.md).
    const toolsCap = toolsCapPerUpstream(this.config.mcp.discovery);
    // the other lists likewise: a 2,000,000-resource list would stall the event loop and take
    // a gigabyte before its entries were checked (docs/operations.md §10)
    const listItemsCap = this.config.mcp.discovery.maxListItemsPerUpstream;
    // The lists are independent: fetched concurrently, each page after the one before.
    await Promise.all(
      pulled.map(async (list) => {
        try {
          const itemsCap =
            list.key === 'tools'
              ? {
                  maxItems: toolsCap.limit,
                  maxItemsName: `mcp.discovery.${toolsCap.key} ${toolsCap.limit}`,
                }
              : {
                  maxItems: listItemsCap,
                  maxItemsName: `mcp.discovery.maxListItemsPerUpstream ${listItemsCap}`,
                };
          const pages = await readListPages(connection, {
            method: list.method,
            key: list.key,
            left,
            maxPages: this.config.mcp.registry.maxPagesPerList,
            ...itemsCap,
            headers,
            onPage: (result, page) => {
              hints[list.key] = addPageHints(hints[list.key], result, page === 1);
            },
          });
          for (const item of pages.items) collected[list.key].push(item);
        } catch (err) {
          if (err instanceof ListPagesFault)
            throw new PullFailure(
              err.kind === 'too-many-items' && list.key !== 'tools'
                ? 'UpstreamTooManyItemsError'
                : PAGE_FAULTS[err.kind],
              err.detail,
            );
          throw err;
        }
      }),
    );
    return {
      era: connection.era ?? '2025',
      capabilities,
      ...collected,
      hints,
    };
  }
}
