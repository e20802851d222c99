/**
 * A relay that passes on `notifications/progress` only while its `progress` increases, and
 * every other message as it comes. The spec has a progress value increase with each
 * notification of one token (MCP 2025-11-25, utilities/progress); a call the gateway runs
 * upstream as several requests under the client's one token (a 2026 upstream's input_required
 * rounds bridged for a 2025 client, docs/operations.md §11) would start again from the first
 * value with each round.
 */
export function increasingProgress(relay: (message: object) => void): (message: object) => void {
  let last = -Infinity;
  return (message) => {
    const progress = progressOf(message);
    if (progress !== undefined) {
      if (!(progress > last)) return;
      last = progress;
    }
    relay(message);
  };
}

function progressOf(message: object): number | undefined {
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'notifications/progress' || typeof params !== 'object' || params === null)
    return undefined;
  const { progress } = params as { progress?: unknown };
  return typeof progress === 'number' ? progress : undefined;
}
