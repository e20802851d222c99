import { Module } from '@nestjs/common';
import { ExecutionModule } from '@app/execution';
import { IdentityModule } from '@app/identity';
import { RegistryModule } from '@app/registry';
import { UpstreamRouter } from './relay/upstream-router';
import { NotificationHub } from './listen/notification-hub.service';
import { ResourceSubscriptions } from './listen/resource-subscriptions.service';
import { resourceUpdateBusProvider } from './listen/resource-update-bus';
import { SessionStreams } from './listen/session-streams.service';
import { SubscriptionsListen } from './listen/subscriptions-listen.service';
import { McpSessionsModule } from './mcp-sessions.module';
import { InputHandoff } from './mrtr/input-handoff';
import { LegacyInputBridge } from './mrtr/legacy-input-bridge';
import { MrtrCalls } from './mrtr/mrtr-calls.service';
import { MrtrSeal } from './sealing/mrtr-seal';
import { RequestStateEnvelope } from './mrtr/request-state-envelope';
import { SpentStates } from './mrtr/spent-states';
import { RelayIds } from './relay/relay-ids';
import { TAKE_ONCE } from './relay/take-once';
import { GatewayTasks } from './tasks/gateway-tasks';
import { TaskIds } from './tasks/task-ids';
import { taskStoreProvider } from './tasks/task-store';
import { TaskWatch } from './tasks/task-watch';
import { UpstreamTasks } from './tasks/upstream-tasks';

const PROVIDERS = [
  // a request to an upstream, with the upstream's messages relayed to its caller
  // (docs/operations.md §10 "Relaying")
  UpstreamRouter,
  RelayIds,
  // multi round-trip and era bridging (docs/operations.md §11 "Multi round-trip and era bridging")
  MrtrSeal,
  RequestStateEnvelope,
  InputHandoff,
  // the relay's one answer per relayed request, taken with the handoff's SET NX
  { provide: TAKE_ONCE, useExisting: InputHandoff },
  SpentStates,
  LegacyInputBridge,
  MrtrCalls,
  // the Tasks extension (docs/operations.md §10 "Tasks")
  TaskIds,
  UpstreamTasks,
  GatewayTasks,
  TaskWatch,
  taskStoreProvider,
  // the caller's notification streams (docs/operations.md §11 "Notification streams")
  NotificationHub,
  SubscriptionsListen,
  SessionStreams,
  ResourceSubscriptions,
  resourceUpdateBusProvider,
];

/**
 * The relays (docs/architecture.md "McpModule's parts"): what travels between a caller and the
 * sources besides one request and its result — upstream messages relayed on a call's answer,
 * multi round-trip and its bridge between eras, tasks, the caller's notification streams.
 */
@Module({
  imports: [McpSessionsModule, RegistryModule, ExecutionModule, IdentityModule],
  providers: PROVIDERS,
  exports: PROVIDERS,
})
export class McpRelayModule {}
