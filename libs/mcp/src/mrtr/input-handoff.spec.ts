import type { GatewayConfig } from '@app/config';
import { InputHandoff } from './input-handoff';
import { MrtrSeal } from '../sealing/mrtr-seal';

/**
 * Two replicas' InputHandoffs over an in-process stand-in for Redis pub/sub (the real one is
 * exercised by test/mrtr/mrtr.e2e-spec.ts): what a holder does with a resume that reaches it late.
 */
function replicas(): {
  sender: InputHandoff;
  holder: InputHandoff;
  unsubscribed: Set<InputHandoff>;
  hung: Set<InputHandoff>;
} {
  const config = {
    sessionKeys: [],
    mcp: { redis: { keyPrefix: 'k' }, identity: 'gw' },
  } as unknown as GatewayConfig;
  // the replicas' shared MCP_SESSION_KEYS
  const seal = new MrtrSeal(config);
  const all: InputHandoff[] = [];
  /** Replicas whose subscriber is not subscribed (Redis just came back): they receive nothing. */
  const unsubscribed = new Set<InputHandoff>();
  /** Replicas whose subscription sits on a node that hangs: counted as receivers, given nothing. */
  const hung = new Set<InputHandoff>();
  const bus = {
    isCluster: false,
    publish: (channel: string, text: string): Promise<number> => {
      const to = all.filter(
        (h) => channel === `k:{gw}:mrtr:${h.replicaId}` && !unsubscribed.has(h),
      );
      for (const h of to)
        if (!hung.has(h))
          setImmediate(() => (h as unknown as { receive(t: string): void }).receive(text));
      return Promise.resolve(to.length);
    },
  };
  const make = (): InputHandoff => {
    const handoff = new InputHandoff(config, seal);
    (handoff as unknown as { publisher: unknown }).publisher = bus;
    // subscribed to its channel (the stand-in delivers to every replica not in `unsubscribed`)
    (handoff as unknown as { listening: boolean }).listening = true;
    (handoff as unknown as { subscriber: unknown }).subscriber = { status: 'ready' };
    all.push(handoff);
    return handoff;
  };
  return { sender: make(), holder: make(), unsubscribed, hung };
}

describe('InputHandoff: a resume that reaches the holder late (docs/operations.md §11 "Parked calls")', () => {
  afterEach(() => jest.restoreAllMocks());

  it('runs the held call for a resume that arrives at once', async () => {
    const { sender, holder } = replicas();
    holder.hold('call-1', (input) => Promise.resolve({ got: input }));
    await expect(sender.resume(holder.replicaId, 'call-1', 'answer', 5000)).resolves.toEqual({
      kind: 'ok',
      value: { got: 'answer' },
    });
  });

  it("takes no reply, ack or resume that is not sealed with the replicas' keys (a hostile publisher on Redis)", async () => {
    const { sender, holder } = replicas();
    const ran: unknown[] = [];
    holder.hold('call-f', (input) => {
      ran.push(input);
      return Promise.resolve({ real: input });
    });
    const receive = (h: InputHandoff, text: string): void =>
      (h as unknown as { receive(t: string): void }).receive(text);
    // a forged resume never runs the held call
    receive(
      holder,
      JSON.stringify({ op: 'resume', key: 'call-f', input: 'forged', replyTo: 'x', corr: 'c' }),
    );
    receive(holder, 'gwho1.k1.AAAA');
    // a forged reply to every message the sender sends is not taken for the holder's
    const real = jest.spyOn(sender as unknown as { settle(r: unknown): void }, 'settle');
    const resumed = sender.resume(holder.replicaId, 'call-f', 'answer', 5000);
    const [corr] = [...(sender as unknown as { waiting: Map<string, unknown> }).waiting.keys()];
    receive(sender, JSON.stringify({ op: 'reply', corr, value: 'forged' }));
    await expect(resumed).resolves.toEqual({ kind: 'ok', value: { real: 'answer' } });
    expect(ran).toEqual(['answer']);
    expect(real).toHaveBeenCalledTimes(1);
  });

  it('does not act on a resume more than 5 s old, and answers unreachable so its sender is not left waiting', async () => {
    const { sender, holder } = replicas();
    const ran: unknown[] = [];
    holder.hold('call-2', (input) => {
      ran.push(input);
      return Promise.resolve('done');
    });
    const now = Date.now();
    // the message is stamped now and read 6 s later (a held event loop, a Redis that held it)
    jest
      .spyOn(Date, 'now')
      .mockReturnValueOnce(now)
      .mockReturnValue(now + 6000);
    await expect(sender.resume(holder.replicaId, 'call-2', 'late', 60_000)).resolves.toEqual({
      kind: 'unreachable',
    });
    expect(ran).toEqual([]);
  });

  it("reaches a holder whose subscriber subscribes again a moment after the sender's publish (Redis just came back)", async () => {
    const { sender, holder, unsubscribed } = replicas();
    holder.hold('call-3', (input) => Promise.resolve({ got: input }));
    unsubscribed.add(holder);
    setTimeout(() => unsubscribed.delete(holder), 700);
    await expect(sender.resume(holder.replicaId, 'call-3', 'answer', 30_000)).resolves.toEqual({
      kind: 'ok',
      value: { got: 'answer' },
    });
  });

  it('a holder that never subscribes holds no call: gone after the grace, long before the timeout', async () => {
    const { sender, holder, unsubscribed } = replicas();
    holder.hold('call-4', () => Promise.resolve('never'));
    unsubscribed.add(holder);
    const started = Date.now();
    await expect(sender.resume(holder.replicaId, 'call-4', 'answer', 60_000)).resolves.toEqual({
      kind: 'gone',
    });
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 40_000);

  it('a holder whose subscription hangs (counted, never given the message): unreachable, not waited on to the timeout and called gone', async () => {
    const { sender, holder, hung } = replicas();
    const ran: unknown[] = [];
    holder.hold('call-5', (input) => {
      ran.push(input);
      return Promise.resolve('done');
    });
    hung.add(holder);
    await expect(sender.resume(holder.replicaId, 'call-5', 'answer', 120_000)).resolves.toEqual({
      kind: 'unreachable',
    });
    expect(ran).toEqual([]);
  }, 30_000);

  it("a sender whose own subscription hangs (a Cluster node): told unreachable, and the same retry sent again gets the value the holder's call ran to, not gone", async () => {
    const { sender, holder, hung } = replicas();
    const ran: unknown[] = [];
    holder.hold(
      'call-r',
      (input) => {
        ran.push(input);
        // the call ends with this round: its key is released, as MrtrCalls does
        holder.release('call-r');
        return Promise.resolve({ result: `ran with ${String(input)}` });
      },
      true,
    );
    hung.add(sender);
    await expect(sender.resume(holder.replicaId, 'call-r', 'answer', 120_000)).resolves.toEqual({
      kind: 'unreachable',
    });
    // the holder did act (its acknowledgement was counted, never delivered)
    expect(ran).toEqual(['answer']);
    hung.delete(sender);
    // the client retries with the same requestState: the outcome, not "no longer pending"
    await expect(sender.resume(holder.replicaId, 'call-r', 'answer', 5000)).resolves.toEqual({
      kind: 'ok',
      value: { result: 'ran with answer' },
    });
    // and on the holder itself
    await expect(holder.resume(holder.replicaId, 'call-r', 'answer', 5000)).resolves.toEqual({
      kind: 'ok',
      value: { result: 'ran with answer' },
    });
    expect(ran).toEqual(['answer']);
    // a key no resume from another replica ran is still gone
    await expect(sender.resume(holder.replicaId, 'call-x', 'answer', 5000)).resolves.toEqual({
      kind: 'gone',
    });
    // a key held without replay (the 2025 bridge): a late duplicate meets no waiting call
    holder.hold('bridge-1', () => {
      holder.release('bridge-1');
      return Promise.resolve('taken');
    });
    await expect(sender.resume(holder.replicaId, 'bridge-1', 'a', 5000)).resolves.toEqual({
      kind: 'ok',
      value: 'taken',
    });
    await expect(sender.resume(holder.replicaId, 'bridge-1', 'a', 5000)).resolves.toEqual({
      kind: 'gone',
    });
  }, 30_000);

  it('a holder that acknowledges but takes long to answer is waited on (no unreachable)', async () => {
    const { sender, holder } = replicas();
    holder.hold(
      'call-6',
      (input) => new Promise((resolve) => setTimeout(() => resolve({ got: input }), 7000)),
    );
    await expect(sender.resume(holder.replicaId, 'call-6', 'answer', 60_000)).resolves.toEqual({
      kind: 'ok',
      value: { got: 'answer' },
    });
  }, 30_000);
});

describe('InputHandoff.takeOnce: one SET NX across the replicas', () => {
  const config = {
    sessionKeys: [],
    mcp: { redis: { keyPrefix: 'k' }, identity: 'gw' },
  } as unknown as GatewayConfig;
  /** A replica whose publisher is this stand-in for Redis (SET NX over `keys`). */
  function replica(keys: Set<string>, redis: { status: string }): InputHandoff {
    const handoff = new InputHandoff(config, new MrtrSeal(config));
    const publisher = {
      get status() {
        return redis.status;
      },
      set: (key: string): Promise<string | null> => {
        // a command sent while there is no connection waits for one, then fails (its bound)
        if (redis.status !== 'ready')
          return new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 50));
        if (keys.has(key)) return Promise.resolve(null);
        keys.add(key);
        return Promise.resolve('OK');
      },
    };
    (handoff as unknown as { publisher: unknown }).publisher = publisher;
    return handoff;
  }

  it('true for the first taker on any replica, false for every later one', async () => {
    const keys = new Set<string>();
    const redis = { status: 'ready' };
    const [a, b] = [replica(keys, redis), replica(keys, redis)];
    const taken = await Promise.all([a.takeOnce('x', 1000), b.takeOnce('x', 1000)]);
    expect(taken.sort()).toEqual([false, true]);
    expect([...keys]).toEqual(['k:{gw}:mrtr:spent:x']);
  });

  it('Redis away: undefined, after the command failed, or at once when not waited for', async () => {
    const a = replica(new Set(), { status: 'reconnecting' });
    const started = Date.now();
    await expect(a.takeOnce('x', 1000, false)).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(40);
    await expect(a.takeOnce('x', 1000)).resolves.toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });
});
