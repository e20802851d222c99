import { Extension, JsonRpcCode } from '@app/wire';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';

/**
 * A task id this caller was not handed, or one that no longer opens: -32602 (SEP-2663), the
 * same answer whatever the reason, so an id tells nothing about another caller's tasks.
 */
export function unknownTask(): GatewayError {
  return new GatewayError(GatewayErrorCode.InvalidParams, 'Invalid params: unknown taskId');
}

/**
 * `tasks/*`, or a tool that runs only as a task, from a request that did not declare the Tasks
 * extension: 400 -32021 (SEP-2575 "Missing Required Capabilities").
 */
export function tasksNotDeclared(): ForwardedError {
  return new ForwardedError(
    JsonRpcCode.MissingClientCapability,
    `Missing required client capability: extensions.${Extension.tasks}`,
    { requiredCapabilities: { extensions: { [Extension.tasks]: {} } } },
  );
}
