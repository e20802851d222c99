import { AsyncLocalStorage } from 'node:async_hooks';

/** Correlation ids of the agent request being served (from its x-request-id and guid headers). */
export interface CallContext {
  readonly requestId?: string;
  readonly guid?: string;
}

const storage = new AsyncLocalStorage<CallContext>();

/** Runs `fn` with this call context; every log line written inside carries its ids. */
export function runWithCallContext<T>(context: CallContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The context of the call being served, or undefined outside a call (boot, refresh). */
export function currentCallContext(): CallContext | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` outside any call: background work it starts (a refresh joined by later callers)
 * logs without the ids of the agent request that happened to trigger it (contract §4).
 */
export function runOutsideCallContext<T>(fn: () => T): T {
  return storage.exit(fn);
}
