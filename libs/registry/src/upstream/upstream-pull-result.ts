/**
 * Why an upstream list pull failed: a type name, never a message (status endpoints and
 * metrics show it; the log line of the failure says more). See
 * docs/operations.md §10 "GET /actuator/upstreams".
 */
export const UPSTREAM_PULL_ERROR_TYPES = [
  'UpstreamUnreachableError',
  'UpstreamTimeoutError',
  'UpstreamHttpError',
  'UpstreamBadAnswerError',
  'UpstreamTooLargeError',
  /** An answer nested deeper than the limit, refused before it was parsed. */
  'UpstreamTooDeepError',
  'UpstreamSessionError',
  'UpstreamListError',
  'UpstreamPaginationError',
  /** tools/list lists more than discovery.maxToolsPerUpstream (or maxToolsTotal) tools. */
  'UpstreamTooManyToolsError',
  /** resources/list, resources/templates/list or prompts/list lists more than discovery.maxListItemsPerUpstream entries. */
  'UpstreamTooManyItemsError',
  'ToolNameCollisionError',
  'CatalogTooLargeError',
  'UnexpectedPullError',
  /**
   * No token for the pull: the client-credentials grant of tokenExchange failed
   * (docs/operations.md §14 "Credentials towards sources").
   */
  'UpstreamCredentialError',
  /**
   * A runtime-registered upstream's host (or token endpoint) resolved, at connect, to an
   * address the registration rules refuse (DNS rebinding); nothing was sent (docs/security.md).
   */
  'UpstreamAddressRefusedError',
] as const;
export type UpstreamPullErrorType = (typeof UPSTREAM_PULL_ERROR_TYPES)[number];

/** One JSON object as an upstream sent it (a tool, resource, template or prompt). */
export type UpstreamItem = Readonly<Record<string, unknown>>;

/**
 * The 2026 cache hints one list of an upstream carried (wire notes §3), over all its pages:
 * the smallest `ttlMs` (ms) and `private` if any page said so; a member is absent when a page
 * omitted it (a 2025 upstream sends none). See docs/operations.md §11 "Cache hints".
 */
export interface UpstreamListHints {
  readonly ttlMs?: number;
  readonly cacheScope?: 'public' | 'private';
}

/** The lists of an upstream by result key. */
export type UpstreamListKey = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

/** Everything one pull of an upstream returned, every page joined, in the upstream's order. */
export interface UpstreamLists {
  /** `2025` (initialize + session) or `2026` (stateless, server/discover). */
  readonly era: '2025' | '2026';
  /** The upstream's ServerCapabilities (initialize or server/discover). */
  readonly capabilities: Readonly<Record<string, unknown>>;
  readonly tools: readonly UpstreamItem[];
  readonly resources: readonly UpstreamItem[];
  readonly resourceTemplates: readonly UpstreamItem[];
  readonly prompts: readonly UpstreamItem[];
  /**
   * The cache hints each list carried (absent: none recorded, e.g. a copy stored before 2026 cache
   * hints were kept).
   */
  readonly hints?: Readonly<Partial<Record<UpstreamListKey, UpstreamListHints>>>;
}

/**
 * The outcome of pulling one upstream's lists, as a value (a failure never sinks the round).
 * Produced by DiscoveryModule, consumed by RegistryService.applyRound.
 */
export type UpstreamPullResult =
  | {
      readonly upstreamId: string;
      readonly kind: 'lists';
      readonly lists: UpstreamLists;
      readonly attemptedAt: Date;
    }
  | {
      readonly upstreamId: string;
      readonly kind: 'failed';
      readonly errorType: UpstreamPullErrorType;
      /** For the log only; never an address or a credential. */
      readonly detail: string;
      readonly attemptedAt: Date;
    };
