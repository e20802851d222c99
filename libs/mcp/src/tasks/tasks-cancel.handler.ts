import { Injectable } from '@nestjs/common';
import type { CallerIdentity } from '@app/identity';
import type { MethodResult } from '../methods/method-handler';
import { TaskMethodHandler } from './task-method.handler';

/** `tasks/cancel`: a task the gateway runs is cancelled (docs/operations.md §10 "Tasks"). */
@Injectable()
export class TasksCancelHandler extends TaskMethodHandler {
  readonly method = 'tasks/cancel';

  protected own(
    taskId: string,
    _clientId: string,
    caller: CallerIdentity | undefined,
  ): Promise<MethodResult> {
    return this.gatewayTasks.cancel(taskId, caller);
  }
}
