import { ownProgressToken } from './progress-token';
import type { JsonRpcMessage } from './upstream-types';

describe('ownProgressToken', () => {
  const progress = (token: unknown, value = 1): JsonRpcMessage => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: token, progress: value },
  });

  it("sends the request's id as the token, keeping every other _meta key and param", () => {
    const own = ownProgressToken(
      { name: 't', _meta: { progressToken: 1, traceparent: '00-abc' } },
      42,
      () => undefined,
    );
    expect(own.params).toEqual({ name: 't', _meta: { progressToken: 42, traceparent: '00-abc' } });
  });

  it("gives the caller what comes under the gateway's token, under the caller's, and nothing under another", () => {
    const seen: JsonRpcMessage[] = [];
    const own = ownProgressToken({ _meta: { progressToken: 'mine' } }, 7, (m) => seen.push(m));
    const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } };
    const request = { jsonrpc: '2.0', id: 3, method: 'elicitation/create', params: {} };
    for (const message of [progress('mine'), progress(7, 2), progress('7'), log, request])
      own.onMessage?.(message, {});
    expect(seen).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'mine', progress: 2 },
      },
      log,
      request,
    ]);
  });

  it('leaves a request that asks for no progress as it is', () => {
    const params = { name: 't', _meta: { traceparent: '00-abc' } };
    const listener = (): void => undefined;
    expect(ownProgressToken(params, 1, listener)).toEqual({ params, onMessage: listener });
    expect(ownProgressToken(undefined, 1, listener)).toEqual({
      params: undefined,
      onMessage: listener,
    });
  });
});
