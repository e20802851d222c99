import { randomBytes } from 'node:crypto';
import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import { CallCancellation } from '@app/execution';
import type { JsonRpcMessage, UpstreamMessageContext } from '@app/upstream';
import { JsonRpcCode } from '@app/wire';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import type { MethodContext } from '../methods/method-handler';
import type { ForwardOptions, UpstreamRouter } from '../relay/upstream-router';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { InputHandoff } from './input-handoff';
import type { LegacyInputBridge } from './legacy-input-bridge';
import { MrtrCalls } from './mrtr-calls.service';
import { RequestStateEnvelope } from './request-state-envelope';
import { SpentStates } from './spent-states';
import type { UpstreamMrtrRequest } from './upstream-mrtr-request';

/**
 * MrtrCalls for a 2026 client (docs/operations.md §11 "Multi round-trip and era bridging"): a
 * call that asks the client nothing is answered with its own outcome, nothing held; the first
 * request the upstream sends the client parks it. The router is a fake that plays the
 * upstream's part through the hook UpstreamRouter.forward is given.
 */

type Play = (options: ForwardOptions, signal: CallCancellation) => Promise<object>;

const config = {
  sessionKeys: [{ kid: 'a', key: randomBytes(32) }],
  redisServer: undefined,
  mcp: {
    identity: 'gw',
    redis: { keyPrefix: 'mcpgw' },
    session: { requestStateTtlSeconds: 600, pendingInputMillis: 60_000 },
    execution: { maxConnectionsPerOrigin: 256 },
  },
} as unknown as GatewayConfig;

const upstream = {
  id: 'calc',
  url: 'http://127.0.0.1:1/mcp',
  callMillis: 5_000,
} as UpstreamDefinition;

const request: UpstreamMrtrRequest = {
  upstream,
  method: 'tools/call',
  target: 'calc__deploy',
  params: { name: 'deploy', arguments: { env: 'staging' } },
  arguments: { env: 'staging' },
};

const origin: UpstreamMessageContext = { sessionId: 's1' };

function ask(method: string, id: number): JsonRpcMessage {
  return { jsonrpc: '2.0', id, method, params: { message: 'Deploy?' } };
}

describe('MrtrCalls for a 2026 client: the call parks only when the upstream asks the client', () => {
  let handoff: InputHandoff;
  let spent: SpentStates;
  let calls: MrtrCalls;
  let play: Play;
  let forwardedWith: { signal?: CallCancellation } = {};
  const responded: JsonRpcMessage[] = [];

  const context = (over: Partial<MethodContext> = {}): MethodContext => ({
    protocolVersion: '2026-07-28',
    headers: {},
    rawBody: '',
    clientCapabilities: { elicitation: {} },
    ...over,
  });

  beforeEach(() => {
    responded.length = 0;
    handoff = new InputHandoff(config, new MrtrSeal(config));
    spent = new SpentStates(handoff);
    const router = {
      forward: (
        _upstream: UpstreamDefinition,
        _method: string,
        _params: unknown,
        ctx: MethodContext,
        options: ForwardOptions,
      ) => {
        forwardedWith = { signal: ctx.signal };
        return play(options, ctx.signal as CallCancellation);
      },
      respond: (_u: UpstreamDefinition, _s: string | undefined, response: JsonRpcMessage) => {
        responded.push(response);
        return Promise.resolve(true);
      },
    } as unknown as UpstreamRouter;
    const envelope = new RequestStateEnvelope(new MrtrSeal(config), config);
    calls = new MrtrCalls(envelope, handoff, {} as LegacyInputBridge, router, spent, config);
  });

  afterEach(() => {
    calls.onApplicationShutdown();
    spent.onModuleDestroy();
  });

  it('a call that asks nothing: its result as the router gave it, nothing held', async () => {
    const result = { content: [{ type: 'text', text: 'ok' }] };
    play = () => Promise.resolve(result);
    const hold = jest.spyOn(handoff, 'hold');
    await expect(calls.call(request, context())).resolves.toBe(result);
    expect(hold).not.toHaveBeenCalled();
  });

  it("the upstream's JSON-RPC error comes back as the router threw it", async () => {
    const error = new ForwardedError(-32050, 'Quota exceeded', { retryAfter: 3 });
    play = () => Promise.reject(error);
    await expect(calls.call(request, context())).rejects.toBe(error);
  });

  it('an unexpected failure is -32603 "Internal error"; an invalid-params refusal keeps its message', async () => {
    play = () => Promise.reject(new Error('boom'));
    await expect(calls.call(request, context())).rejects.toMatchObject({
      rpcCode: JsonRpcCode.InternalError,
      message: 'Internal error',
    });
    play = () =>
      Promise.reject(new GatewayError(GatewayErrorCode.InvalidParams, 'Invalid params: no'));
    await expect(calls.call(request, context())).rejects.toMatchObject({
      rpcCode: JsonRpcCode.InvalidParams,
      message: 'Invalid params: no',
    });
  });

  it("a 2026 upstream's own input_required: its requestState sealed in the gateway's envelope", async () => {
    play = () =>
      Promise.resolve({
        resultType: 'input_required',
        inputRequests: { a: { method: 'elicitation/create', params: {} } },
        requestState: 'upstream-state',
      });
    const answer = (await calls.call(request, context())) as Record<string, unknown>;
    expect(answer.resultType).toBe('input_required');
    expect(typeof answer.requestState).toBe('string');
    expect(answer.requestState).not.toContain('upstream-state');
  });

  it("the upstream asks the client mid-call: the call parks under the cancellation it was forwarded with, and the client's answer reaches the upstream", async () => {
    let finish: (result: object) => void = () => undefined;
    let callSignal: CallCancellation | undefined;
    play = (options, signal) => {
      callSignal = signal;
      setImmediate(() => options.onRequest?.(ask('elicitation/create', 7), origin));
      return new Promise((resolve) => (finish = resolve));
    };
    const hold = jest.spyOn(handoff, 'hold');
    const clientSignal = new CallCancellation();
    const first = (await calls.call(request, context({ signal: clientSignal }))) as Record<
      string,
      unknown
    >;
    expect(first).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicitation-1': { method: 'elicitation/create' } },
    });
    expect(hold).toHaveBeenCalledTimes(1);
    // the round is over: the client's request ending no longer cancels the parked call
    clientSignal.abort('client-closed');
    expect(callSignal?.aborted).toBe(false);
    // the retry answers; the upstream gets the answer and then finishes the call
    const retry = calls.call(
      {
        ...request,
        params: {
          ...request.params,
          requestState: first.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
        },
      },
      context(),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(responded).toEqual([
      { jsonrpc: '2.0', id: 7, result: { action: 'accept', content: { ok: true } } },
    ]);
    finish({ content: [{ type: 'text', text: 'deployed' }] });
    await expect(retry).resolves.toEqual({ content: [{ type: 'text', text: 'deployed' }] });
  });

  it("the client's cancellation during the round cancels the upstream call", async () => {
    play = (_options, signal) =>
      new Promise((_resolve, reject) =>
        signal.onAbort((reason) => reject(new ForwardedError(-32603, `stopped: ${reason}`))),
      );
    const clientSignal = new CallCancellation();
    const answer = calls.call(request, context({ signal: clientSignal }));
    await new Promise((resolve) => setImmediate(resolve));
    clientSignal.abort('cancelled');
    await expect(answer).rejects.toMatchObject({ message: 'stopped: cancelled' });
    expect(forwardedWith.signal?.aborted).toBe(true);
  });

  it('a request the client cannot answer, alone: -32021 naming the capability, the upstream refused', async () => {
    play = (options, signal) => {
      setImmediate(() => options.onRequest?.(ask('sampling/createMessage', 9), origin));
      return new Promise((_resolve, reject) =>
        signal.onAbort(() => reject(new ForwardedError(-32603, 'cancelled'))),
      );
    };
    await expect(calls.call(request, context())).rejects.toMatchObject({
      rpcCode: JsonRpcCode.MissingClientCapability,
      rpcData: { requiredCapabilities: { sampling: {} } },
    });
    expect(responded).toMatchObject([{ id: 9, error: { code: JsonRpcCode.MethodNotFound } }]);
  });

  it('a request that comes in the same turn as the result: the result is the answer', async () => {
    const result = { content: [] };
    play = (options) =>
      new Promise((resolve) => {
        setImmediate(() => {
          options.onRequest?.(ask('elicitation/create', 3), origin);
          resolve(result);
        });
      });
    await expect(calls.call(request, context())).resolves.toBe(result);
  });
});
