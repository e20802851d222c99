import { CatalogRefresh } from '@app/registry';
import type { BundleRefreshService } from './bundle-refresh.service';
import type { RefreshScheduler } from './refresh-scheduler.service';

/** The registry's refresh port, served by this module's rounds and schedule. */
export class DiscoveryCatalogRefresh extends CatalogRefresh {
  constructor(
    private readonly rounds: BundleRefreshService,
    private readonly scheduler: RefreshScheduler,
  ) {
    super();
  }

  refreshForUnknownTool(): Promise<void> {
    return this.rounds.refreshForUnknownTool();
  }

  msUntilNextRefresh(): number | undefined {
    return this.scheduler.msUntilNextRefresh();
  }
}
