import { Injectable } from '@nestjs/common';
import type { CallerIdentity } from '@app/identity';
import type { MethodResult } from '../methods/method-handler';
import { TaskMethodHandler } from './task-method.handler';

/** `tasks/update`: a task the gateway runs never asks for input, so it is acknowledged (docs/operations.md §10 "Tasks"). */
@Injectable()
export class TasksUpdateHandler extends TaskMethodHandler {
  readonly method = 'tasks/update';

  protected own(
    taskId: string,
    _clientId: string,
    caller: CallerIdentity | undefined,
  ): Promise<MethodResult> {
    return this.gatewayTasks.update(taskId, caller);
  }
}
