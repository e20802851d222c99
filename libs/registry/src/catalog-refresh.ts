/**
 * What a request path may ask of the schedule of pulls. Owned by the registry so that the
 * front door needs no import of DiscoveryModule: data flows Discovery → Registry → Mcp, and a
 * call that needs a refresh asks through this port (docs/architecture.md). DiscoveryModule
 * implements it; the composition root (apps/gateway) binds the two.
 */
export abstract class CatalogRefresh {
  /**
   * One refresh of every source for a name the catalog lacks (contract §8): a round that starts
   * after the call, shared by the misses that wait together, at most one per
   * `notFoundRefreshMinIntervalMillis`. Never rejects.
   */
  abstract refreshForUnknownTool(): Promise<void>;

  /** ms until the next scheduled round, or undefined before the schedule has started. */
  abstract msUntilNextRefresh(): number | undefined;
}
