import { Injectable } from '@nestjs/common';
import type { CallerIdentity } from '@app/identity';
import type { MethodResult } from '../methods/method-handler';
import { TaskMethodHandler } from './task-method.handler';

/** `tasks/get`: a task the gateway runs answers from its record (docs/operations.md §10 "Tasks"). */
@Injectable()
export class TasksGetHandler extends TaskMethodHandler {
  readonly method = 'tasks/get';

  protected own(
    taskId: string,
    clientId: string,
    caller: CallerIdentity | undefined,
  ): Promise<MethodResult> {
    return this.gatewayTasks.get(taskId, clientId, caller);
  }
}
