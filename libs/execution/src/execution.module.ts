import { Module } from '@nestjs/common';
import { UpstreamModule } from '@app/upstream';
import { ToolExecutor } from './tool-executor.service';
import { UpstreamExecutor } from './upstream-executor.service';
import { UpstreamListener } from './upstream-listener.service';

/** ExecutionModule: tool calls over HTTP to Tool Services, and requests routed to upstream MCP servers. */
@Module({
  imports: [UpstreamModule],
  providers: [ToolExecutor, UpstreamExecutor, UpstreamListener],
  exports: [ToolExecutor, UpstreamExecutor, UpstreamListener],
})
export class ExecutionModule {}
