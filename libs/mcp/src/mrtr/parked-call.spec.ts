import type { JsonRpcMessage } from '@app/upstream';
import { MAX_PENDING_INPUTS, ParkedCall, type PendingUpstreamRequest } from './parked-call';

function setup(): { call: ParkedCall; answered: [PendingUpstreamRequest, JsonRpcMessage][] } {
  const answered: [PendingUpstreamRequest, JsonRpcMessage][] = [];
  const call = new ParkedCall((request, response) => answered.push([request, response]));
  return { call, answered };
}

const elicit = (id: number, message: string): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'elicitation/create',
  params: { message },
});

describe('a parked 2025 upstream call (docs/operations.md §11 "Multi round-trip and era bridging")', () => {
  it('an upstream request becomes an inputRequests entry without id or envelope', async () => {
    const { call } = setup();
    call.add(elicit(3, 'Deploy?'), { sessionId: 's1' });
    expect(await call.next()).toEqual({
      kind: 'input',
      inputRequests: {
        'elicitation-1': { method: 'elicitation/create', params: { message: 'Deploy?' } },
      },
    });
  });

  it(`keeps at most ${MAX_PENDING_INPUTS} requests: one more ends the call (input-overflow) and nothing past it is kept or answered`, () => {
    const { call, answered } = setup();
    for (let i = 0; i < MAX_PENDING_INPUTS; i++) call.add(elicit(i, `q${i}`), {});
    expect(call.cancellation.aborted).toBe(false);
    for (let i = 0; i < 100; i++) call.add(elicit(1000 + i, 'more'), {});
    call.addUndeclared(elicit(5000, 'x'), {}, 'sampling', { sampling: {} });
    expect(call.cancellation.reason).toBe('input-overflow');
    call.refuseAll('abandoned');
    expect(answered).toHaveLength(MAX_PENDING_INPUTS);
    expect(answered.every(([request]) => Number(request.id) < MAX_PENDING_INPUTS)).toBe(true);
  });

  it('requests that arrive together are asked together', async () => {
    const { call } = setup();
    const next = call.next();
    call.add(elicit(3, 'a'), {});
    call.add({ jsonrpc: '2.0', id: 4, method: 'sampling/createMessage', params: {} }, {});
    const outcome = await next;
    expect(outcome.kind === 'input' && Object.keys(outcome.inputRequests)).toEqual([
      'elicitation-1',
      'sampling-2',
    ]);
  });

  it('the retry answers each request it has a key for, on the session it came from; the rest stay asked', async () => {
    const { call, answered } = setup();
    call.add(elicit(3, 'a'), { sessionId: 's1' });
    call.add(elicit(4, 'b'), { sessionId: 's1' });
    call.respond({ 'elicitation-1': { action: 'accept', content: { ok: true } }, unknown: {} });
    expect(answered).toEqual([
      [
        expect.objectContaining({ id: 3, sessionId: 's1' }),
        { jsonrpc: '2.0', id: 3, result: { action: 'accept', content: { ok: true } } },
      ],
    ]);
    const outcome = await call.next();
    expect(outcome.kind === 'input' && Object.keys(outcome.inputRequests)).toEqual([
      'elicitation-2',
    ]);
  });

  it('waits for the call to settle once every request is answered', async () => {
    const { call } = setup();
    call.add(elicit(3, 'a'), {});
    call.respond({ 'elicitation-1': { action: 'decline' } });
    const next = call.next();
    call.settle({ result: { content: [] } });
    expect(await next).toEqual({ kind: 'settled', result: { content: [] } });
  });

  it('an abandoned call refuses what is still pending', () => {
    const { call, answered } = setup();
    call.add(elicit(9, 'a'), {});
    call.refuseAll('gone');
    expect(answered[0]?.[1]).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32603, message: 'gone' },
    });
  });

  describe('requests for a capability the client did not declare', () => {
    const sampling = (id: number): JsonRpcMessage => ({
      jsonrpc: '2.0',
      id,
      method: 'sampling/createMessage',
      params: {},
    });

    it('alone: the call needs what the client lacks (missing), and the upstream is refused', async () => {
      const { call, answered } = setup();
      const next = call.next();
      call.addUndeclared(sampling(5), { sessionId: 's1' }, 'sampling', { sampling: {} });
      expect(await next).toEqual({ kind: 'missing', requiredCapabilities: { sampling: {} } });
      expect(answered).toEqual([
        [
          expect.objectContaining({ id: 5, sessionId: 's1' }),
          {
            jsonrpc: '2.0',
            id: 5,
            error: { code: -32601, message: 'The client did not declare the sampling capability' },
          },
        ],
      ]);
    });

    it('with a declared one: the declared one is asked, the undeclared one refused', async () => {
      const { call, answered } = setup();
      const next = call.next();
      call.addUndeclared(sampling(5), {}, 'sampling', { sampling: {} });
      call.add(elicit(6, 'name?'), {});
      const outcome = await next;
      expect(outcome.kind === 'input' && Object.keys(outcome.inputRequests)).toEqual([
        'elicitation-1',
      ]);
      expect(answered.map(([request]) => request.id)).toEqual([5]);
    });
  });
});
