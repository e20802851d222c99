import { Module } from '@nestjs/common';
import { ToolExecutor } from './tool-executor.service';

/** ExecutionModule: tool calls over HTTP to Tool Services. */
@Module({
  providers: [ToolExecutor],
  exports: [ToolExecutor],
})
export class ExecutionModule {}
