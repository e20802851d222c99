import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { SessionTokenService, VirtualServerRegistrations, VirtualServers } from '@app/mcp';
import { GatewayMetrics } from '@app/observability';
import { Clock, PinnedTools, RegistryService } from '@app/registry';
import { CatalogController } from './catalog.controller';
import { ConsoleAssets } from './console/console-assets';
import { ConsoleController } from './console/console.controller';
import { ManagementIndexController } from './index.controller';
import { McpAddress } from './console/mcp-address';
import { ManagementErrorFilter } from './management-error.filter';
import { AdminAuditLog } from '../admin/admin-audit-log';
import { AdminAuthenticator } from '../admin/admin-authenticator';
import { UpstreamRegistrations } from '../admin/upstream-registrations.service';
import { AdminGate } from './admin-gate';
import { AdminReviewsController } from './admin-reviews.controller';
import { AdminVirtualServersController } from './admin-virtual-servers.controller';
import { AdminUpstreamsController } from './admin-upstreams.controller';
import { PrometheusController } from './prometheus.controller';
import { HealthController } from './health.controller';
import { RegistryHealthIndicator } from './registry-health.indicator';
import { ToolBundlesController } from './tool-bundles.controller';
import { ServersController } from './servers.controller';
import { UpstreamsController } from './upstreams.controller';

/** The instances the management listener shares with the agent-facing application. */
export interface ManagementDependencies {
  readonly registry: RegistryService;
  /** Reviews of pinned tool definitions (docs/operations.md §6). */
  readonly pinned: PinnedTools;
  readonly clock: Clock;
  /** Virtual servers (docs/operations.md §16). */
  readonly servers: VirtualServers;
  /** Virtual servers registered at runtime (docs/operations.md §16). */
  readonly serverRegistrations: VirtualServerRegistrations;
  readonly metrics: GatewayMetrics;
  readonly sessions: SessionTokenService;
  readonly config: GatewayConfig;
  /** Filled in once /mcp is bound: the console's "Run" URL (docs/console.md "Tools"). */
  readonly mcpAddress: McpAddress;
  /**
   * The registration API's services (docs/operations.md §15), from the main context's AdminModule.
   */
  readonly admin: {
    readonly registrations: UpstreamRegistrations;
    readonly authenticator: AdminAuthenticator;
    readonly audit: AdminAuditLog;
  };
}

/**
 * The operator-facing application on MANAGEMENT_PORT: /actuator/* and the /console page. A second Nest
 * application (one HTTP server each) that shares the main application's singletons, so
 * /mcp and /actuator can never be reached through each other's port.
 */
@Module({})
export class ManagementModule {
  static forRoot(deps: ManagementDependencies): DynamicModule {
    return {
      module: ManagementModule,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [
        HealthController,
        ToolBundlesController,
        UpstreamsController,
        ServersController,
        PrometheusController,
        CatalogController,
        ConsoleController,
        ManagementIndexController,
        AdminUpstreamsController,
        AdminReviewsController,
        AdminVirtualServersController,
      ],
      providers: [
        // every error answer of the port as {statusCode, error, message} (operations §15)
        { provide: APP_FILTER, useClass: ManagementErrorFilter },
        { provide: RegistryService, useValue: deps.registry },
        { provide: GatewayMetrics, useValue: deps.metrics },
        { provide: SessionTokenService, useValue: deps.sessions },
        { provide: GATEWAY_CONFIG, useValue: deps.config },
        { provide: McpAddress, useValue: deps.mcpAddress },
        { provide: ConsoleAssets, useValue: new ConsoleAssets() },
        { provide: UpstreamRegistrations, useValue: deps.admin.registrations },
        { provide: AdminAuthenticator, useValue: deps.admin.authenticator },
        { provide: AdminAuditLog, useValue: deps.admin.audit },
        { provide: AdminGate, useValue: new AdminGate(deps.admin.authenticator, deps.admin.audit) },
        { provide: PinnedTools, useValue: deps.pinned },
        { provide: Clock, useValue: deps.clock },
        { provide: VirtualServers, useValue: deps.servers },
        { provide: VirtualServerRegistrations, useValue: deps.serverRegistrations },
        RegistryHealthIndicator,
      ],
      exports: [RegistryHealthIndicator],
    };
  }
}
