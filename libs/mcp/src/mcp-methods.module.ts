import { Module, type Type } from '@nestjs/common';
import { ExecutionModule } from '@app/execution';
import { IdentityModule } from '@app/identity';
import { RegistryModule } from '@app/registry';
import { ToolCallAudit } from './audit/tool-call-audit';
import { CompletionCompleteHandler } from './handlers/completion-complete.handler';
import { InitializeHandler } from './handlers/initialize.handler';
import { LiveLists } from './handlers/live-lists.service';
import { LoggingSetLevelHandler } from './handlers/logging-set-level.handler';
import { MethodDispatcher } from './handlers/method-dispatcher';
import { METHOD_HANDLERS, type MethodHandler } from './methods/method-handler';
import { PingHandler } from './handlers/ping.handler';
import { PromptsGetHandler } from './handlers/prompts-get.handler';
import { PromptsListHandler } from './handlers/prompts-list.handler';
import { ResourceTemplatesListHandler } from './handlers/resource-templates-list.handler';
import { ResourcesListHandler } from './handlers/resources-list.handler';
import { ResourcesReadHandler } from './handlers/resources-read.handler';
import { ResourcesSubscribeHandler } from './handlers/resources-subscribe.handler';
import { ResourcesUnsubscribeHandler } from './handlers/resources-unsubscribe.handler';
import { ServerDiscoverHandler } from './handlers/server-discover.handler';
import { ToolsCallHandler } from './handlers/tools-call.handler';
import { ToolsListHandler } from './handlers/tools-list.handler';
import { CallerLimits } from './limits/caller-limits.service';
import { rateLimitRedisProvider } from './limits/rate-limit-redis.provider';
import { SubscriptionsListenHandler } from './listen/subscriptions-listen.handler';
import { McpRelayModule } from './mcp-relay.module';
import { McpSessionsModule } from './mcp-sessions.module';
import { SelectTool } from './search/select-tool';
import { ToolSearch } from './search/tool-search.service';
import { ToolSelections } from './search/tool-selections';
import { TasksCancelHandler } from './tasks/tasks-cancel.handler';
import { TasksGetHandler } from './tasks/tasks-get.handler';
import { TasksUpdateHandler } from './tasks/tasks-update.handler';

/** One handler per method of the method table (libs/wire/src/methods.ts). */
const HANDLERS: Type<MethodHandler>[] = [
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

/**
 * The methods (docs/architecture.md "McpModule's parts"): a handler per MCP method, era-neutral,
 * and what they share — the dispatcher, lists served live, tool search and selections, the
 * callers' rate limits, the audit of calls.
 */
@Module({
  imports: [McpSessionsModule, McpRelayModule, RegistryModule, ExecutionModule, IdentityModule],
  providers: [
    ...HANDLERS,
    {
      provide: METHOD_HANDLERS,
      useFactory: (...handlers: MethodHandler[]) => handlers,
      inject: HANDLERS,
    },
    MethodDispatcher,
    LiveLists,
    ToolSearch,
    ToolSelections,
    SelectTool,
    ToolCallAudit,
    rateLimitRedisProvider,
    CallerLimits,
  ],
  // ToolSelections: a session ended forgets its selections (SessionEnding)
  exports: [MethodDispatcher, ToolSelections],
})
export class McpMethodsModule {}
