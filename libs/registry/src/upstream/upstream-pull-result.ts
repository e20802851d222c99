/**
 * Why an upstream list pull failed: a type name, never a message (status endpoints and
 * metrics show it; the log line of the failure says more). Issue 10 §3, §7.
 */
export const UPSTREAM_PULL_ERROR_TYPES = [
  'UpstreamUnreachableError',
  'UpstreamTimeoutError',
  'UpstreamHttpError',
  'UpstreamBadAnswerError',
  'UpstreamTooLargeError',
  'UpstreamSessionError',
  'UpstreamListError',
  'UpstreamPaginationError',
  'ToolNameCollisionError',
  'CatalogTooLargeError',
  'UnexpectedPullError',
  /** No token for the pull: the client-credentials grant of tokenExchange failed (issue 12 §4). */
  'UpstreamCredentialError',
] as const;
export type UpstreamPullErrorType = (typeof UPSTREAM_PULL_ERROR_TYPES)[number];

/** One JSON object as an upstream sent it (a tool, resource, template or prompt). */
export type UpstreamItem = Readonly<Record<string, unknown>>;

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
