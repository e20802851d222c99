import { Injectable } from '@nestjs/common';
import { allowsTool, type CallerIdentity } from '@app/identity';
import { declaresExtension, Extension } from '@app/wire';
import type { MethodContext, MethodHandler, MethodResult } from '../methods/method-handler';
import { stringParam, type Params } from '../relay/upstream-handler-support';
import { TaskIds } from './task-ids';
import { UpstreamTasks } from './upstream-tasks';
import { GatewayTasks } from './gateway-tasks';
import { tasksNotDeclared, unknownTask } from './task-errors';

/**
 * What `tasks/get`, `tasks/update` and `tasks/cancel` share (SEP-2663; docs/operations.md §10
 * "Tasks"): for a request that declares the extension, the client's task id opened (TaskIds)
 * and the request sent to the task's owner; each method's own file says what it does with a task
 * the gateway runs.
 */
@Injectable()
export abstract class TaskMethodHandler implements MethodHandler {
  abstract readonly method: string;

  constructor(
    private readonly ids: TaskIds,
    private readonly upstreamTasks: UpstreamTasks,
    protected readonly gatewayTasks: GatewayTasks,
  ) {}

  /** The method for a task the gateway runs (a bundle tool's call). */
  protected abstract own(
    taskId: string,
    clientId: string,
    caller: CallerIdentity | undefined,
  ): Promise<MethodResult>;

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    if (!declaresExtension(context.clientCapabilities, Extension.tasks)) throw tasksNotDeclared();
    const clientId = stringParam(params, 'taskId');
    const opened = this.ids.open(clientId, context.caller);
    if (opened === undefined) throw unknownTask();
    if (opened.owner.kind === 'gateway') {
      // the bundle tool must still be in the caller's grant, as for a call of it
      const { access } = context;
      if (access !== undefined && !allowsTool(access, opened.owner.source, opened.owner.tool))
        throw unknownTask();
      return this.own(opened.taskId, clientId, context.caller);
    }
    return this.upstreamTasks.forward(
      this.method,
      opened.owner,
      opened.taskId,
      clientId,
      params,
      context,
    );
  }
}
