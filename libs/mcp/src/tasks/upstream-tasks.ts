import { Injectable } from '@nestjs/common';
import { upstreamSource, type UpstreamDefinition } from '@app/config';
import { RegistryService } from '@app/registry';
import { declaresExtension, Extension, isModernVersion, JsonRpcCode } from '@app/wire';
import { ForwardedError } from '../errors/gateway-error';
import { SerializedResult, type MethodContext, type MethodResult } from '../methods/method-handler';
import { UpstreamRouter } from '../relay/upstream-router';
import { mayUseUpstreamTask, TaskIds, urlDigest, type UpstreamTaskOwner } from './task-ids';

/** Longest upstream task id taken (a client's id carries it, in headers and listen filters). */
export const MAX_UPSTREAM_TASK_ID = 1024;
import { unknownTask } from './task-errors';

function valueOf(result: MethodResult): Record<string, unknown> {
  return (result instanceof SerializedResult ? result.value : result) as Record<string, unknown>;
}

/**
 * Tasks that upstream MCP servers run (docs/operations.md §10 "Tasks"): a CreateTaskResult of
 * an upstream's `tools/call` reaches the client with a task id the gateway sealed (TaskIds), and
 * `tasks/get|update|cancel` of such an id go to that upstream with its own id, while the caller
 * may still use it, the answer carrying the client's id again.
 */
@Injectable()
export class UpstreamTasks {
  constructor(
    private readonly ids: TaskIds,
    private readonly router: UpstreamRouter,
    private readonly registry: RegistryService,
  ) {}

  /**
   * An upstream's answer to a `tools/call`, as the client gets it: a CreateTaskResult with the
   * client's id for the task. A task is only for a 2026 client that declared the extension on
   * the request; an upstream that creates one for another client answered wrongly (-32603).
   */
  handOut(
    result: MethodResult,
    upstream: UpstreamDefinition,
    tool: string,
    context: MethodContext,
  ): MethodResult {
    const value = valueOf(result);
    if (value.resultType !== 'task') return result;
    if (
      !isModernVersion(context.protocolVersion) ||
      !declaresExtension(context.clientCapabilities, Extension.tasks)
    )
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `Upstream ${upstream.id} answered with a task, but this request did not declare the ${Extension.tasks} extension`,
      );
    if (typeof value.taskId !== 'string' || value.taskId === '')
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `Upstream ${upstream.id} answered with a task without a taskId`,
      );
    // the client's id carries it, and goes in Mcp-Name headers and listen filters
    if (value.taskId.length > MAX_UPSTREAM_TASK_ID)
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `Upstream ${upstream.id} answered with a taskId over ${MAX_UPSTREAM_TASK_ID} characters`,
      );
    return {
      ...value,
      taskId: this.ids.handOut(
        { kind: 'upstream', id: upstream.id, source: upstreamSource(upstream), tool },
        value.taskId,
        context.caller,
        value.ttlMs,
      ),
    };
  }

  /**
   * `tasks/get`, `tasks/update` or `tasks/cancel` of an upstream's task: `clientId` is the id the
   * client sent, `taskId` the upstream's own. An upstream that left the catalog, or that the
   * caller may no longer use, no longer knows the task as far as the caller can tell.
   */
  async forward(
    method: string,
    owner: UpstreamTaskOwner,
    taskId: string,
    clientId: string,
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    const upstream = this.registry.current()?.extras.upstreams.get(owner.id)?.upstream;
    if (
      upstream === undefined ||
      urlDigest(upstreamSource(upstream)) !== owner.urlDigest ||
      !mayUseUpstreamTask(context.access, owner)
    )
      throw unknownTask();
    const result = valueOf(
      await this.router.forward(upstream, method, { ...params, taskId }, context),
    );
    if (!('taskId' in result)) {
      // tasks/update and tasks/cancel acknowledge with an empty result; a tasks/get answer is
      // the DetailedTask, which names its task: one without would reach the client unnamed
      if (method !== 'tasks/get') return result;
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `Upstream ${upstream.id} answered ${method} without the task's id`,
      );
    }
    // a DetailedTask of another task than the one asked is a broken answer
    if (result.taskId !== taskId)
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `Upstream ${upstream.id} answered ${method} with another task's id`,
      );
    return { ...result, taskId: clientId };
  }
}
