/**
 * The management endpoints the console reads and writes (same origin as the page). Shapes:
 * /actuator/toolBundles (contract §9), /actuator/upstreams (docs/operations.md §10),
 * /actuator/catalog/{tools,history} (docs/console.md) and /admin/upstreams
 * (docs/operations.md §15 "Routes").
 */

export interface ConsoleSettings {
  readonly identity: string;
  readonly version: string;
  readonly profile: string;
  readonly mcpUrl: string | null;
  readonly mcpPort: number | null;
}

export interface RedisStatus {
  readonly configured: boolean;
  readonly available: boolean | null;
  readonly lastFailureReason: string | null;
}

/** One held tool of a pinned source (docs/operations.md §6 "Pinned tool definitions"). */
export interface HeldToolView {
  readonly name: string;
  readonly kind: 'new' | 'changed';
  readonly digest: string;
  readonly since: string;
  readonly changes: readonly {
    readonly member: string;
    readonly approved?: unknown;
    readonly pulled?: unknown;
  }[];
  readonly approvedAt?: string;
  readonly approvedBy?: string;
}

/** A pinned source's tools held for review. */
export interface SourceReview {
  readonly heldTools: number;
  readonly held: readonly HeldToolView[];
}

export interface BundleView {
  readonly id: string;
  readonly status: string;
  readonly pinned?: true;
  readonly review?: SourceReview;
  readonly revision: string | null;
  readonly toolCount: number;
  readonly lastSuccessAt: string | null;
  readonly lastAttemptAt: string | null;
  readonly consecutiveFailures: number;
  readonly lastFailureReason: string | null;
  readonly detail?: string;
  readonly source: string | null;
  readonly ageSeconds: number | null;
}

export interface ToolBundlesAnswer {
  readonly identity: string;
  readonly ready: boolean;
  readonly catalog: {
    readonly published: boolean;
    readonly toolCount: number;
    readonly publishedAt: string | null;
    readonly lastRejectionReason: string | null;
  };
  readonly redis: RedisStatus;
  readonly bundles: readonly BundleView[];
}

export interface UpstreamView {
  readonly id: string;
  /** Configured (read-only) or registered through /admin/upstreams. */
  readonly origin?: 'config' | 'registered';
  readonly status: string;
  readonly pinned?: true;
  readonly review?: SourceReview;
  readonly era: string | null;
  readonly namePrefix: string;
  readonly counts: Readonly<Record<string, number>>;
  readonly leftOut: readonly { readonly name?: string; readonly reason?: string }[];
  /** URIs it lists that an earlier source keeps (docs/operations.md §10 "Routing"). */
  readonly resourceConflicts?: readonly {
    readonly uri: string;
    readonly keptBy: string;
    readonly template: string | null;
  }[];
  readonly viewConflicts?: readonly {
    readonly tool: string;
    readonly resourceUri: string;
    readonly servedBy: string;
  }[];
  readonly lastAttemptAt: string | null;
  readonly lastSuccessAt: string | null;
  readonly consecutiveFailures: number;
  readonly lastErrorType: string | null;
  readonly source: string | null;
  readonly ageSeconds: number | null;
}

export interface UpstreamsAnswer {
  readonly upstreams: readonly UpstreamView[];
}

/** A record of the registration API (docs/operations.md §15 "Routes"). */
export interface UpstreamRecord {
  readonly id: string;
  readonly url: string;
  readonly namePrefix: string;
  readonly enabled: boolean;
  readonly protocol: string;
  readonly authorization: { readonly mode: string; readonly valueEnv?: string };
  readonly origin: 'config' | 'registered';
  readonly state: 'PENDING' | 'ACTIVE' | 'FAILED' | 'DISABLED';
  readonly reason?: string;
  readonly era?: string;
  readonly toolCount?: number;
  readonly createdAt?: string;
  readonly updatedAt?: string;
  readonly createdBy?: string;
}

export interface AdminUpstreamsAnswer {
  readonly storage: 'redis' | 'memory';
  readonly upstreams: readonly UpstreamRecord[];
}

export interface CatalogToolView {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
  readonly source: { readonly kind: 'bundle' | 'upstream'; readonly id: string };
}

/** GET /actuator/servers (docs/operations.md §16 "Virtual servers"). */
export interface VirtualServerView {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  readonly toolCount: number;
  /** The catalog tools its view holds now. */
  readonly toolNames: readonly string[];
}

export interface ServersAnswer {
  readonly servers: readonly VirtualServerView[];
}

export interface CatalogToolsAnswer {
  readonly publishedAt: string | null;
  readonly tools: readonly CatalogToolView[];
}

export interface HistoryPublished {
  readonly kind: 'published';
  readonly seq: number;
  readonly at: string;
  readonly toolCount: number;
  readonly counts: { readonly added: number; readonly removed: number; readonly changed: number };
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
  readonly revisions: Readonly<Record<string, { from: string | null; to: string | null }>>;
}

export interface HistoryRejected {
  readonly kind: 'rejected';
  readonly seq: number;
  readonly at: string;
  readonly lastAt: string;
  readonly repeats: number;
  readonly reason: string;
  readonly detail: string;
  readonly sources: readonly string[];
}

export interface HistoryAnswer {
  readonly capacity: number;
  readonly entries: readonly (HistoryPublished | HistoryRejected)[];
}

/** A management answer that was not 2xx: the status and the server's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The message of an error body: `message` (Nest, a string or a list), `error`, or the text. */
function messageOf(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown; problems?: unknown };
    const message = Array.isArray(body.message) ? body.message.join('; ') : body.message;
    // /admin names every broken field in `problems`, in the boot validation's words
    // (docs/operations.md §15 "Routes")
    const problems = Array.isArray(body.problems) ? body.problems.map(String) : [];
    if (typeof message === 'string' && message !== '')
      return problems.length > 0 && !problems.every((p) => message.includes(p))
        ? `${message}: ${problems.join('; ')}`
        : message;
    if (typeof body.error === 'string') return body.error;
  } catch {
    // not JSON: the text itself
  }
  return text.trim() === '' ? `HTTP ${status}` : text.trim().slice(0, 500);
}

/**
 * Calls the management port (a path of this page's own origin); JSON in, JSON out; throws
 * ApiError for a non-2xx answer. `token` is the admin token: it goes to /admin only
 * (tokens.ts), so it is refused for any other path.
 */
export async function call<T>(
  path: string,
  init: { method?: string; body?: unknown; token?: string } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.token !== undefined && init.token !== '') {
    if (!path.startsWith('/admin/')) throw new Error(`the admin token is not sent to ${path}`);
    headers.authorization = `Bearer ${init.token}`;
  }
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    cache: 'no-store',
  });
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, messageOf(res.status, text));
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
