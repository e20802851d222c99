import { EventEmitter } from 'node:events';
import { RedisBreaker } from './redis-breaker';
import type { RedisClient } from './redis-client';

/** A client that answers PING as told: the events ioredis emits, and ping. */
class FakeClient extends EventEmitter {
  pings = 0;
  answer = false;
  ping(): Promise<string> {
    this.pings++;
    return this.answer ? Promise.resolve('PONG') : Promise.reject(new Error('timeout'));
  }
}

function setup(): { client: FakeClient; breaker: RedisBreaker; lines: string[] } {
  const client = new FakeClient();
  const lines: string[] = [];
  const breaker = new RedisBreaker(
    client as unknown as RedisClient,
    { log: (m) => lines.push(`log ${m}`), warn: (m) => lines.push(`warn ${m}`) },
    { away: 'away', back: 'back' },
  );
  return { client, breaker, lines };
}

describe('RedisBreaker: a Redis that does not answer costs a request path one timeout, not one per command', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('after a failed command the next ones are refused at once, until a PING answers', async () => {
    const { client, breaker, lines } = setup();
    await expect(breaker.run(() => Promise.resolve(1))).resolves.toBe(1);
    await expect(breaker.run(() => Promise.reject(new Error('timed out')))).rejects.toThrow(
      'timed out',
    );
    expect(breaker.available()).toBe(false);
    const command = jest.fn(() => Promise.resolve(2));
    await expect(breaker.run(command)).rejects.toThrow('Redis is not answering');
    expect(command).not.toHaveBeenCalled();
    // probes: 0.5 s, then 1 s after a failed one
    await jest.advanceTimersByTimeAsync(499);
    expect(client.pings).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(client.pings).toBe(1);
    await jest.advanceTimersByTimeAsync(999);
    expect(client.pings).toBe(1);
    client.answer = true;
    await jest.advanceTimersByTimeAsync(1);
    expect(client.pings).toBe(2);
    expect(breaker.available()).toBe(true);
    await expect(breaker.run(command)).resolves.toBe(2);
    expect(lines).toEqual(['warn away', 'log back']);
    // no probe while it answers
    await jest.advanceTimersByTimeAsync(60_000);
    expect(client.pings).toBe(2);
  });

  it("probes back off to 10 s at most, and ioredis' ready makes it available at once", async () => {
    const { client, breaker, lines } = setup();
    client.emit('error', new Error('ECONNREFUSED'));
    client.emit('error', new Error('ECONNREFUSED'));
    await jest.advanceTimersByTimeAsync(0.5e3 + 1e3 + 2e3 + 4e3 + 8e3 + 10e3 + 10e3);
    expect(client.pings).toBe(7);
    client.emit('ready');
    expect(breaker.available()).toBe(true);
    // "back" is said when a command works again, not when the connection does
    expect(lines).toEqual(['warn away']);
    await breaker.run(() => Promise.resolve('OK'));
    expect(lines).toEqual(['warn away', 'log back']);
    // a later outage starts from 0.5 s again
    breaker.failed();
    await jest.advanceTimersByTimeAsync(500);
    expect(client.pings).toBe(8);
  });

  it('an error Redis answers with (READONLY during a failover) costs no wait: commands go on, one warning, no probe, no flapping', async () => {
    const { client, breaker, lines } = setup();
    const readonly = Object.assign(
      new Error("READONLY You can't write against a read only replica."),
      {
        name: 'ReplyError',
      },
    );
    for (let i = 0; i < 20; i++) {
      await expect(breaker.run(() => Promise.reject(readonly))).rejects.toThrow('READONLY');
      expect(breaker.available()).toBe(true);
      await jest.advanceTimersByTimeAsync(500);
    }
    expect(client.pings).toBe(0);
    expect(lines).toEqual(['warn away']);
    await breaker.run(() => Promise.resolve('OK'));
    expect(lines).toEqual(['warn away', 'log back']);
  });

  it('close stops the probes', async () => {
    const { client, breaker } = setup();
    breaker.failed();
    breaker.close();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(client.pings).toBe(0);
  });
});
