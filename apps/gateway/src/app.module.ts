import { Module, type DynamicModule } from '@nestjs/common';
import { GatewayConfigModule, type GatewayConfig } from '@app/config';
import { DiscoveryModule } from '@app/discovery';
import { ExecutionModule } from '@app/execution';
import { McpModule } from '@app/mcp';
import { ObservabilityModule } from '@app/observability';
import { RegistryModule } from '@app/registry';
import { AdminModule } from './admin/admin.module';
import { CatalogRefreshModule } from './catalog-refresh.module';

/** The composition root of the agent-facing application (PORT). */
@Module({})
export class AppModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        GatewayConfigModule.forRoot(config),
        ObservabilityModule,
        RegistryModule,
        DiscoveryModule,
        CatalogRefreshModule,
        ExecutionModule,
        McpModule,
        // runtime-registered upstreams, served on the management port only (docs/operations.md §15)
        AdminModule,
      ],
    };
  }
}
