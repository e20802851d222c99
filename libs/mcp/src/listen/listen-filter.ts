import { LIST_CHANGED_METHOD, type ListKind } from './catalog-changes';

/**
 * The `notifications` filter of `subscriptions/listen` (MCP 2026-07-28 SubscriptionFilter;
 * wire notes §2.8): each list type is opt-in, `resourceSubscriptions` names the resource URIs
 * whose `notifications/resources/updated` the client wants.
 */
export interface SubscriptionFilter {
  readonly toolsListChanged?: true;
  readonly promptsListChanged?: true;
  readonly resourcesListChanged?: true;
  readonly resourceSubscriptions?: readonly string[];
  /** Tasks whose `notifications/tasks` the client wants (the Tasks extension, SEP-2663). */
  readonly taskIds?: readonly string[];
}

/** The filter key of each list. */
export const FILTER_KEY: Readonly<
  Record<ListKind, 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'>
> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources'];

/** Bounds on what one listen may ask for: URIs per filter and the length of one URI. */
const MAX_RESOURCE_SUBSCRIPTIONS = 1000;
const MAX_URI_LENGTH = 2048;
/** Bounds on the task ids of one listen, and on one id (the gateway's are ~200 characters). */
const MAX_TASK_IDS = 64;
const MAX_TASK_ID_LENGTH = 4096;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads `params.notifications` of a listen request: the requested filter, or why it is invalid
 * (the caller answers -32602 in-band, as the v2 SDK does; wire notes §2.8). A list key must be
 * a boolean (`false` asks for nothing), `resourceSubscriptions` a list of strings; unknown
 * keys are dropped, never an error.
 */
export function parseListenFilter(
  params: Readonly<Record<string, unknown>> | undefined,
): { readonly filter: SubscriptionFilter } | { readonly problem: string } {
  const requested = params?.notifications;
  if (!isRecord(requested))
    return {
      problem: "'notifications' is required and must be a SubscriptionFilter object",
    };
  const filter: {
    -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K];
  } = {};
  for (const kind of LIST_KINDS) {
    const key = FILTER_KEY[kind];
    const value = requested[key];
    if (value === undefined || value === false) continue;
    if (value !== true) return { problem: `notifications.${key} must be a boolean` };
    filter[key] = true;
  }
  const uris = requested.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || uris.some((u) => typeof u !== 'string'))
      return { problem: 'notifications.resourceSubscriptions must be a list of URI strings' };
    if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS)
      return {
        problem: `notifications.resourceSubscriptions may name at most ${MAX_RESOURCE_SUBSCRIPTIONS} URIs`,
      };
    if ((uris as string[]).some((u) => u.length === 0 || u.length > MAX_URI_LENGTH))
      return {
        problem: `notifications.resourceSubscriptions: each URI must have 1 to ${MAX_URI_LENGTH} characters`,
      };
    if (uris.length > 0) filter.resourceSubscriptions = [...new Set(uris as string[])];
  }
  const taskIds = requested.taskIds;
  if (taskIds !== undefined) {
    if (!Array.isArray(taskIds) || taskIds.some((t) => typeof t !== 'string'))
      return { problem: 'notifications.taskIds must be a list of task id strings' };
    if (taskIds.length > MAX_TASK_IDS)
      return { problem: `notifications.taskIds may name at most ${MAX_TASK_IDS} tasks` };
    if ((taskIds as string[]).some((t) => t.length === 0 || t.length > MAX_TASK_ID_LENGTH))
      return {
        problem: `notifications.taskIds: each id must have 1 to ${MAX_TASK_ID_LENGTH} characters`,
      };
    if (taskIds.length > 0) filter.taskIds = [...new Set(taskIds as string[])];
  }
  return { filter };
}

/**
 * The subset of a requested filter the gateway honours (sent back in the acknowledgement;
 * wire notes §2.8, like the v2 SDK's `honoredSubset`): a list type only when the gateway
 * advertises that list (`capabilities.tools` etc.), a resource URI only when
 * `canSubscribe(uri)` (an upstream that owns it delivers updates), a task id only when
 * `canWatch(taskId)` (one handed to this caller).
 */
export function honoredFilter(
  requested: SubscriptionFilter,
  capabilities: Readonly<Record<string, unknown>>,
  canSubscribe: (uri: string) => boolean,
  canWatch: (taskId: string) => boolean = () => false,
): SubscriptionFilter {
  const honored: {
    -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K];
  } = {};
  for (const kind of LIST_KINDS) {
    const key = FILTER_KEY[kind];
    if (requested[key] === true && capabilities[kind] !== undefined) honored[key] = true;
  }
  const uris = requested.resourceSubscriptions?.filter(canSubscribe) ?? [];
  if (uris.length > 0) honored.resourceSubscriptions = uris;
  const taskIds = requested.taskIds?.filter(canWatch) ?? [];
  if (taskIds.length > 0) honored.taskIds = taskIds;
  return honored;
}

/** true when the filter asks for nothing (the stream is acknowledged, then closed at once). */
export function isEmptyFilter(filter: SubscriptionFilter): boolean {
  return Object.keys(filter).length === 0;
}

/**
 * Whether a change notification passes the filter: a list_changed when its list was asked
 * for, a `notifications/resources/updated` when its `params.uri` is one of the subscribed URIs.
 * Anything else (progress, log messages, requests) never goes on a listen stream.
 */
export function filterAccepts(filter: SubscriptionFilter, method: string, uri?: unknown): boolean {
  for (const kind of LIST_KINDS)
    if (method === LIST_CHANGED_METHOD[kind]) return filter[FILTER_KEY[kind]] === true;
  if (method === 'notifications/resources/updated')
    return typeof uri === 'string' && (filter.resourceSubscriptions?.includes(uri) ?? false);
  return false;
}

/** Whether a `notifications/tasks` of this task passes the filter. */
export function filterWatches(filter: SubscriptionFilter, taskId: unknown): boolean {
  return typeof taskId === 'string' && (filter.taskIds?.includes(taskId) ?? false);
}
