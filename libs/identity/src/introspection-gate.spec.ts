import type { IntrospectionClient, IntrospectionResult } from './introspection-client';
import { IntrospectionGate } from './introspection-gate';

/** An introspection client whose answers the test releases by hand, counting calls. */
class HeldClient {
  calls: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly pending: (() => void)[] = [];

  constructor(private readonly answer: (token: string) => IntrospectionResult) {}

  introspect(token: string): Promise<IntrospectionResult> {
    this.calls.push(token);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise((resolve) =>
      this.pending.push(() => {
        this.inFlight -= 1;
        resolve(this.answer(token));
      }),
    );
  }

  /** Answers every call made by now (the gate calls after a microtask); resolves once their continuations ran. */
  async releaseAll(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    for (const release of this.pending.splice(0)) release();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const INACTIVE: IntrospectionResult = { active: false, reason: 'The access token is not active' };
const DOWN: IntrospectionResult = { active: false, reason: 'down', unavailable: true };

function gate(client: HeldClient, maxConcurrent = 2, inactiveCacheMs = 10_000, slotWaitMs = 5_000) {
  return new IntrospectionGate(client as unknown as IntrospectionClient, {
    maxConcurrent,
    inactiveCacheMs,
    slotWaitMs,
  });
}

describe('IntrospectionGate', () => {
  it('coalesces identical tokens in flight and reuses a refused answer', async () => {
    const client = new HeldClient(() => INACTIVE);
    const g = gate(client);
    const answers = Array.from({ length: 20 }, () => g.introspect('junk'));
    await client.releaseAll();
    expect(await Promise.all(answers)).toEqual(answers.map(() => INACTIVE));
    expect(await g.introspect('junk')).toBe(INACTIVE);
    expect(client.calls).toEqual(['junk']);
  });

  it('never remembers an unavailable answer', async () => {
    let answer = DOWN;
    const client = new HeldClient(() => answer);
    const g = gate(client);
    const first = g.introspect('t');
    await client.releaseAll();
    expect(await first).toBe(DOWN);
    answer = INACTIVE;
    const second = g.introspect('t');
    await client.releaseAll();
    expect(await second).toBe(INACTIVE);
    expect(client.calls).toEqual(['t', 't']);
  });

  it('keeps at most maxConcurrent calls in flight (unknown tokens one fewer); the rest wait in order', async () => {
    const client = new HeldClient(() => INACTIVE);
    const g = gate(client, 3);
    const answers = Array.from({ length: 10 }, (_, i) => g.introspect(`t${i}`));
    for (let round = 0; round < 6; round += 1) await client.releaseAll();
    expect(await Promise.all(answers)).toHaveLength(10);
    expect(client.maxInFlight).toBe(2);
    expect(client.calls).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
  });

  it('a request that waits longer than slotWaitMs for a slot is unavailable, without a call', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const client = new HeldClient(() => INACTIVE);
      const g = gate(client, 1, 10_000, 1_000);
      const first = g.introspect('a');
      const second = g.introspect('b');
      await new Promise((resolve) => setImmediate(resolve));
      jest.advanceTimersByTime(1_001);
      expect(await second).toMatchObject({ active: false, unavailable: true });
      expect(client.calls).toEqual(['a']);
      await client.releaseAll();
      expect(await first).toBe(INACTIVE);
      // the slot is free again: the next token is introspected at once
      const third = g.introspect('c');
      await new Promise((resolve) => setImmediate(resolve));
      expect(client.calls).toEqual(['a', 'c']);
      await client.releaseAll();
      expect(await third).toBe(INACTIVE);
    } finally {
      jest.useRealTimers();
    }
  });
  it('a flood of unknown tokens never holds the last slot: a returning caller is introspected next, ahead of the queue', async () => {
    const ACTIVE: IntrospectionResult = { active: true, claims: { sub: 'alice' } };
    const client = new HeldClient((token) => (token === 'alice' ? ACTIVE : INACTIVE));
    const g = gate(client, 3);
    // alice introspects active once: from now on she is a returning caller
    const first = g.introspect('alice');
    await client.releaseAll();
    expect(await first).toEqual(ACTIVE);

    const junk = Array.from({ length: 50 }, (_, i) => g.introspect(`junk-${i}`));
    await new Promise((resolve) => setImmediate(resolve));
    // unknown tokens take all slots but one
    expect(client.inFlight).toBe(2);
    const again = g.introspect('alice');
    await new Promise((resolve) => setImmediate(resolve));
    expect(client.calls.at(-1)).toBe('alice');
    expect(client.inFlight).toBe(3);
    await client.releaseAll();
    expect(await again).toEqual(ACTIVE);
    // the queued junk goes on two at a time
    for (let i = 0; i < 30 && client.calls.length < 52; i++) await client.releaseAll();
    expect(client.calls.length).toBe(52);
    await client.releaseAll();
    expect(client.maxInFlight).toBe(3);
    expect(await Promise.all(junk)).toEqual(junk.map(() => INACTIVE));
  });

  it('a returning caller waiting behind other returning callers still goes before unknown tokens', async () => {
    const ACTIVE: IntrospectionResult = { active: true, claims: { sub: 'x' } };
    const client = new HeldClient((token) => (token.startsWith('user') ? ACTIVE : INACTIVE));
    const g = gate(client, 2);
    const warm = ['user-1', 'user-2', 'user-3'].map((t) => g.introspect(t));
    for (let i = 0; i < 5; i++) await client.releaseAll();
    await Promise.all(warm);
    client.calls = [];
    const users = ['user-1', 'user-2'].map((t) => g.introspect(t));
    const junk = Array.from({ length: 5 }, (_, i) => g.introspect(`junk-${i}`));
    const late = g.introspect('user-3');
    await new Promise((resolve) => setImmediate(resolve));
    expect(client.calls).toEqual(['user-1', 'user-2']);
    await client.releaseAll();
    // user-3 is granted a slot before any unknown token
    expect(client.calls[2]).toBe('user-3');
    for (let i = 0; i < 10; i++) await client.releaseAll();
    await Promise.all([...users, ...junk, late]);
    expect(client.calls.slice(3).every((t) => t.startsWith('junk-'))).toBe(true);
  });
});
