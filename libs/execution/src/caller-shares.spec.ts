import type { CallerIdentity } from '@app/identity';
import { CallerShares, poolOf } from './caller-shares';

const caller = (subject: string): CallerIdentity => ({
  subject,
  scopes: [],
  claims: {},
  token: `t-${subject}`,
});

describe('CallerShares: one caller runs at most its share of a source', () => {
  it('takes up to the share per caller and source; another caller or source is not touched', () => {
    const shares = new CallerShares(2);
    const bob = caller('bob');
    expect(shares.take('u', bob)).toBeDefined();
    expect(shares.take('u', bob)).toBeDefined();
    expect(shares.take('u', bob)).toBeUndefined();
    expect(shares.take('v', bob)).toBeDefined();
    expect(shares.take('u', caller('alice'))).toBeDefined();
  });

  it('counts nothing without a caller (auth off, the gateway own traffic)', () => {
    const shares = new CallerShares(1);
    for (let i = 0; i < 5; i += 1) expect(shares.take('u', undefined)).toBeDefined();
  });

  it('hands a released request to the first waiter, in order, and a release counts once', async () => {
    const shares = new CallerShares(1);
    const bob = caller('bob');
    const first = shares.take('u', bob)!;
    const order: string[] = [];
    const second = shares.acquire('u', bob, 10_000) as Promise<(() => void) | undefined>;
    const third = shares.acquire('u', bob, 10_000) as Promise<(() => void) | undefined>;
    void second.then(() => order.push('second'));
    void third.then(() => order.push('third'));
    first();
    first();
    const got = await second;
    expect(got).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['second']);
    got!();
    expect(await third).toBeDefined();
    expect(order).toEqual(['second', 'third']);
  });

  it('gives up a wait at its deadline or when cancelled, and the waiter leaves the queue', async () => {
    jest.useFakeTimers();
    try {
      const shares = new CallerShares(1);
      const bob = caller('bob');
      const held = shares.take('u', bob)!;
      const timedOut = shares.acquire('u', bob, 1_000) as Promise<unknown>;
      jest.advanceTimersByTime(1_000);
      expect(await timedOut).toBeUndefined();
      const controller = new AbortController();
      const cancelled = shares.acquire('u', bob, 60_000, controller.signal) as Promise<unknown>;
      controller.abort();
      expect(await cancelled).toBeUndefined();
      held();
      // nobody waits any more: the share is free again
      expect(shares.take('u', bob)).toBeDefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('defaults to a quarter of the smaller of the connections and the call slots', () => {
    const of = (execution: Record<string, number>) =>
      CallerShares.of({ mcp: { execution } } as never).perCaller;
    expect(of({ maxConnectionsPerOrigin: 256, maxConcurrentCallsPerBundle: 256 })).toBe(64);
    expect(of({ maxConnectionsPerOrigin: 4, maxConcurrentCallsPerBundle: 256 })).toBe(1);
    expect(of({ maxConnectionsPerOrigin: 2, maxConcurrentCallsPerBundle: 2 })).toBe(1);
    expect(
      of({
        maxConnectionsPerOrigin: 256,
        maxConcurrentCallsPerBundle: 256,
        maxConcurrentCallsPerCaller: 7,
      }),
    ).toBe(7);
  });

  it('counts per pool of connections: the kind of source and its URL origin', () => {
    expect(poolOf('upstream', 'http://10.0.0.1:8080/mcp')).toBe(
      poolOf('upstream', 'http://10.0.0.1:8080/other'),
    );
    expect(poolOf('upstream', 'http://10.0.0.1:8080/mcp')).not.toBe(
      poolOf('upstream', 'http://10.0.0.1:8081/mcp'),
    );
    expect(poolOf('bundle', 'http://10.0.0.1:8080/mcp')).not.toBe(
      poolOf('upstream', 'http://10.0.0.1:8080/mcp'),
    );
  });
});
