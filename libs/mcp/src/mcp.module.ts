import { McpExchanges } from './http/mcp-exchanges.service';
import { InFlightRequests } from './http/in-flight-requests';
import { Module } from '@nestjs/common';
import { ExecutionModule } from '@app/execution';
import { IdentityModule } from '@app/identity';
import { RegistryModule } from '@app/registry';
import { LegacyCodec } from './codecs/legacy.codec';
import { CacheHintsService } from './codecs/cache-hints';
import { ModernCodec } from './codecs/modern.codec';
import { MethodDispatcher } from './handlers/method-dispatcher';
import { METHOD_HANDLERS } from './handlers/method-handler';
import { PingHandler } from './handlers/ping.handler';
import { InitializeHandler } from './handlers/initialize.handler';
import { ServerDiscoverHandler } from './handlers/server-discover.handler';
import { ToolsCallHandler } from './handlers/tools-call.handler';
import { ToolsListHandler } from './handlers/tools-list.handler';
import { ServerCapabilities } from './handlers/server-capabilities';
import { UpstreamRouter } from './handlers/upstream-router';
import { LiveLists } from './handlers/live-lists.service';
import { CompletionCompleteHandler } from './handlers/completion-complete.handler';
import { LoggingSetLevelHandler } from './handlers/logging-set-level.handler';
import { PromptsGetHandler } from './handlers/prompts-get.handler';
import { PromptsListHandler } from './handlers/prompts-list.handler';
import { ResourceTemplatesListHandler } from './handlers/resource-templates-list.handler';
import { ResourcesListHandler } from './handlers/resources-list.handler';
import { ResourcesReadHandler } from './handlers/resources-read.handler';
import { ResourcesSubscribeHandler } from './handlers/resources-subscribe.handler';
import { ResourcesUnsubscribeHandler } from './handlers/resources-unsubscribe.handler';
import { RelayIds } from './relay/relay-ids';
import { InputHandoff } from './mrtr/input-handoff';
import { SpentStates } from './mrtr/spent-states';
import { LegacyInputBridge } from './mrtr/legacy-input-bridge';
import { MrtrCalls } from './mrtr/mrtr-calls.service';
import { MrtrSeal } from './mrtr/mrtr-seal';
import { RequestStateEnvelope } from './mrtr/request-state-envelope';
import { ToolCallAudit } from './audit/tool-call-audit';
import { CallerLimits } from './limits/caller-limits.service';
import { rateLimitRedisProvider } from './limits/rate-limit-redis.provider';
import { NotificationHub } from './listen/notification-hub.service';
import { SessionStreams } from './listen/session-streams.service';
import { ResourceSubscriptions } from './listen/resource-subscriptions.service';
import { SessionLogLevels } from './session/session-log-levels';
import { sharedSessionStoreProvider } from './session/shared-session-store';
import { resourceUpdateBusProvider } from './listen/resource-update-bus';
import { SubscriptionsListen } from './listen/subscriptions-listen.service';
import { SubscriptionsListenHandler } from './listen/subscriptions-listen.handler';
import { TasksCancelHandler, TasksGetHandler, TasksUpdateHandler } from './tasks/tasks.handlers';
import { TaskIds } from './tasks/task-ids';
import { UpstreamTasks } from './tasks/upstream-tasks';
import { GatewayTasks } from './tasks/gateway-tasks';
import { taskStoreProvider } from './tasks/task-store';
import { TaskWatch } from './tasks/task-watch';

const HANDLERS = [
  InitializeHandler,
  ServerDiscoverHandler,
  SubscriptionsListenHandler,
  PingHandler,
  ToolsListHandler,
  ToolsCallHandler,
  PromptsListHandler,
  PromptsGetHandler,
  ResourcesListHandler,
  ResourceTemplatesListHandler,
  ResourcesReadHandler,
  ResourcesSubscribeHandler,
  ResourcesUnsubscribeHandler,
  CompletionCompleteHandler,
  LoggingSetLevelHandler,
  TasksGetHandler,
  TasksUpdateHandler,
  TasksCancelHandler,
];
import { ToolSearch } from './search/tool-search.service';
import { serverStoreProvider } from './servers/server-store';
import { VirtualServerRegistrations } from './servers/server-registrations.service';
import { SelectTool } from './search/select-tool';
import { ToolSelections } from './search/tool-selections';
import { VirtualServers } from './servers/virtual-servers.service';
import { HttpAccessPolicy } from './http/http-access.policy';
import { McpController } from './http/mcp.controller';
import { McpHttpServer } from './http/mcp-http-server';
import { McpTransport } from './mcp-transport.service';
import { SessionTokenService } from './session/session-token.service';

/**
 * McpModule: the /mcp controller, JSON-RPC envelope, protocol eras, method handlers. /mcp is
 * served by McpController when the module runs in a Nest fastify application (the default);
 * McpHttpServer serves it on plain node:http instead with MCP_HTTP_SERVER=node.
 */
@Module({
  imports: [RegistryModule, ExecutionModule, IdentityModule],
  controllers: [McpController],
  providers: [
    ...HANDLERS,
    {
      provide: METHOD_HANDLERS,
      useFactory: (...handlers: unknown[]) => handlers,
      inject: HANDLERS,
    },
    ServerCapabilities,
    UpstreamRouter,
    LiveLists,
    RelayIds,
    // multi round-trip and era bridging
    // (docs/operations.md §11 "Multi round-trip and era bridging")
    MrtrSeal,
    RequestStateEnvelope,
    InputHandoff,
    SpentStates,
    LegacyInputBridge,
    MrtrCalls,
    // the Tasks extension (docs/operations.md §10 "Tasks")
    TaskIds,
    UpstreamTasks,
    GatewayTasks,
    TaskWatch,
    taskStoreProvider,
    MethodDispatcher,
    ToolCallAudit,
    rateLimitRedisProvider,
    CallerLimits,
    SessionTokenService,
    InFlightRequests,
    McpExchanges,
    VirtualServers,
    serverStoreProvider,
    VirtualServerRegistrations,
    ToolSearch,
    ToolSelections,
    SelectTool,
    LegacyCodec,
    ModernCodec,
    CacheHintsService,
    McpTransport,
    HttpAccessPolicy,
    McpHttpServer,
    NotificationHub,
    SubscriptionsListen,
    SessionStreams,
    ResourceSubscriptions,
    SessionLogLevels,
    sharedSessionStoreProvider,
    resourceUpdateBusProvider,
  ],
  exports: [McpHttpServer, GatewayTasks],
})
export class McpModule {}
