import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { AnswerBudget } from './answer-budget';
import { CallerShares } from './caller-shares';
import { SourceCredentialsModule } from '@app/identity';
import { UpstreamModule } from '@app/upstream';
import { ToolExecutor } from './tool-executor.service';
import { UpstreamExecutor } from './upstream-executor.service';
import { LiveListFetcher } from './live-list-fetcher';
import { UpstreamListener } from './upstream-listener.service';
import { CallerRequestHeaders } from './caller-request-headers';

/** ExecutionModule: tool calls over HTTP to Tool Services, and requests routed to upstream MCP servers. */
@Module({
  imports: [UpstreamModule, SourceCredentialsModule],
  providers: [
    // one budget of answer bytes for Tool Service and upstream answers (operations §1)
    {
      provide: AnswerBudget,
      useFactory: (config: GatewayConfig) => AnswerBudget.of(config),
      inject: [GATEWAY_CONFIG],
    },
    // one count of each caller's requests per origin's pool, bundles and upstreams (operations §1)
    {
      provide: CallerShares,
      useFactory: (config: GatewayConfig) => CallerShares.of(config),
      inject: [GATEWAY_CONFIG],
    },
    ToolExecutor,
    UpstreamExecutor,
    LiveListFetcher,
    UpstreamListener,
    CallerRequestHeaders,
  ],
  exports: [ToolExecutor, UpstreamExecutor, LiveListFetcher, UpstreamListener],
})
export class ExecutionModule {}
