/** The method an upstream tells a resource change with (MCP 2025-11-25, "Subscriptions"). */
export const RESOURCE_UPDATED = 'notifications/resources/updated';
/** The longest `_meta` of an update passed on (as JSON text); a longer one is left out. */
const MAX_UPDATE_META_CHARS = 1024;

/**
 * An upstream notification's `_meta` as JSON text, when it is an object of at most
 * MAX_UPDATE_META_CHARS; undefined otherwise (left out of what is relayed).
 */
export function smallMetaText(meta: unknown): string | undefined {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
  const text = JSON.stringify(meta);
  return text.length <= MAX_UPDATE_META_CHARS ? text : undefined;
}

/**
 * What a client is passed of an upstream's change notification (docs/security.md, "Update
 * work"): of `notifications/resources/updated` the URI and a small `_meta`, of a list change
 * nothing (MCP's notifications have no other member), so an upstream cannot make each relayed
 * copy megabytes long.
 */
export function relayedChangeParams(
  method: string,
  params: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  if (method !== RESOURCE_UPDATED || typeof params.uri !== 'string') return {};
  return smallMetaText(params._meta) === undefined
    ? { uri: params.uri }
    : { uri: params.uri, _meta: params._meta };
}
