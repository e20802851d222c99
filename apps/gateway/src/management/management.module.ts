import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SessionTokenService } from '@app/mcp';
import { GatewayMetrics } from '@app/observability';
import { RegistryService } from '@app/registry';
import { AdminAuditLog } from '../admin/admin-audit-log';
import { AdminAuthenticator } from '../admin/admin-authenticator';
import { UpstreamRegistrations } from '../admin/upstream-registrations.service';
import { AdminUpstreamsController } from './admin-upstreams.controller';
import { PrometheusController } from './prometheus.controller';
import { HealthController } from './health.controller';
import { RegistryHealthIndicator } from './registry-health.indicator';
import { ToolBundlesController } from './tool-bundles.controller';
import { UpstreamsController } from './upstreams.controller';

/** The instances the management listener shares with the agent-facing application. */
export interface ManagementDependencies {
  readonly registry: RegistryService;
  readonly metrics: GatewayMetrics;
  readonly sessions: SessionTokenService;
  /** The registration API's services (issue 13), from the main context's AdminModule. */
  readonly admin: {
    readonly registrations: UpstreamRegistrations;
    readonly authenticator: AdminAuthenticator;
    readonly audit: AdminAuditLog;
  };
}

/**
 * The operator-facing application on MANAGEMENT_PORT: /actuator/*. A second Nest
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
        PrometheusController,
        AdminUpstreamsController,
      ],
      providers: [
        { provide: RegistryService, useValue: deps.registry },
        { provide: GatewayMetrics, useValue: deps.metrics },
        { provide: SessionTokenService, useValue: deps.sessions },
        { provide: UpstreamRegistrations, useValue: deps.admin.registrations },
        { provide: AdminAuthenticator, useValue: deps.admin.authenticator },
        { provide: AdminAuditLog, useValue: deps.admin.audit },
        RegistryHealthIndicator,
      ],
      exports: [RegistryHealthIndicator],
    };
  }
}
