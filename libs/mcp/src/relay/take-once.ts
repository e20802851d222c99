/** DI token of what takes a key once across the replicas (InputHandoff, McpRelayModule). */
export const TAKE_ONCE = Symbol('TAKE_ONCE');

/**
 * Takes a key once across the replicas: one atomic Redis `SET NX PX`, so two replicas taking
 * the same key at the same moment never both get true. InputHandoff's (libs/mcp/src/mrtr), the
 * one that spends `requestState` envelopes, given to the relay through this token because the
 * relay sits below mrtr (eslint.boundaries.mjs MCP_FOLDER_LAYERS).
 */
export interface TakeOnce {
  /**
   * @param waitForRedis false: undefined at once while Redis is away (no connection), instead of
   *   waiting for a reconnect up to the command's bound
   * @returns true when this call took `key`, false when someone had; undefined without Redis or
   *   when Redis did not answer (the caller decides alone then)
   */
  takeOnce(key: string, ttlMillis: number, waitForRedis?: boolean): Promise<boolean | undefined>;
}
